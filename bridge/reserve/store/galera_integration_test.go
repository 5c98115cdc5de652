//go:build integration

package store

// Issue 29: booking admission on the testbed's three-node Galera cluster.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/store/storetest"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestGaleraBookingRace: 50 clients, each a process of its own (its own
// pool, its own store and service), spread over the three Galera nodes,
// book h100s (4 in the pool) over overlapping windows at once. A row lock
// does not conflict across Galera nodes, so admission writes its lock row:
// of two admissions through two nodes, certification aborts one and
// sqldb.WithTx runs it again. The stored bookings never commit more than
// 4 GPUs at any instant (a sweep over them), every request is either
// stored or refused, every refusal names the next free window, and the
// lock row was written once per admission.
func TestGaleraBookingRace(t *testing.T) {
	_, dsns := testbed.RequireGalera(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sc, err := storetest.New(ctx, dsns[0], "gpubridge_bkgal")
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	const clients, capacity = 50, 4
	services := make([]*reserve.Service, clients)
	for i := range clients {
		cfg, err := mysql.ParseDSN(dsns[i%len(dsns)])
		if err != nil {
			t.Fatal(err)
		}
		cfg.DBName = sc.Name
		db, err := sqldb.Open(ctx, cfg.FormatDSN())
		if err != nil {
			t.Fatalf("client %d on node %d: %v", i, i%len(dsns)+1, err)
		}
		defer db.Close()
		services[i] = &reserve.Service{Store: New(db, "bkgal"), Source: fixedPool{}, Tenants: poolTenants{db: db}, Coster: onePerHour{},
			Settings: reserve.Settings{Prefix: "gpubridge-"}, Now: func() time.Time { return svcNow }}
	}
	hour := func(n int) time.Time { return svcNow.Add(time.Duration(24+n) * time.Hour) }
	before := sqldb.Retries()
	errs := make([]error, clients)
	stored := make([]bool, clients)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			<-start
			from := hour(i % 5)
			_, err := services[i].Add(ctx, "galera", reserve.Request{Tenant: fmt.Sprintf("bkgal%d", i%7), Kind: reserve.KindGPU, GPUType: "h100",
				Count: 1 + i%3, Start: from, End: from.Add(3 * time.Hour)})
			stored[i], errs[i] = err == nil, err
		})
	}
	close(start)
	wg.Wait()
	admitted, refused := 0, 0
	for i, err := range errs {
		var ref *reserve.Refusal
		switch {
		case err == nil:
			admitted++
		case errors.As(err, &ref):
			refused++
			if len(ref.Next) == 0 || !strings.Contains(err.Error(), "next available: ") {
				t.Errorf("client %d: its refusal names no next free window: %v", i, err)
			}
		default:
			t.Errorf("client %d (node %d): %v", i, i%len(dsns)+1, err)
		}
	}
	after := sqldb.Retries()
	t.Logf("%d admitted, %d refused; retried: %d certification conflicts, %d silent rollbacks", admitted, refused,
		after["deadlock"]-before["deadlock"], after["aborted silently"]-before["aborted silently"])
	if admitted == 0 || refused == 0 {
		t.Fatalf("%d admitted, %d refused: the race decided nothing", admitted, refused)
	}

	// The sweep, through node 3, causally (wsrep_sync_wait): every booking
	// stored through any node.
	cfg, _ := mysql.ParseDSN(dsns[2])
	cfg.DBName = sc.Name
	cfg.Params = map[string]string{"wsrep_sync_wait": "1"}
	reader, err := sqldb.Open(ctx, cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	bs, err := New(reader, "bkgal").List(ctx, reserve.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != admitted {
		t.Fatalf("%d bookings stored, %d admissions answered yes", len(bs), admitted)
	}
	var version int
	if err := reader.GetContext(ctx, &version, "SELECT version FROM booking_locks WHERE cluster = 'bkgal' AND resource = 'gpu:h100'"); err != nil {
		t.Fatal(err)
	}
	// Every admission wrote the row once: a lower version is a lost update
	// (MariaDB 11.8's Galera ran a silently aborted transaction's last
	// statements outside it until sqldb.WithTx checked its savepoint).
	if version != admitted {
		t.Errorf("lock row version %d after %d admissions: an admission's write of its lock row was lost", version, admitted)
	}
	inv, _ := fixedPool{}.Inventory(ctx)
	settings := reserve.Settings{Prefix: "gpubridge-"}
	var cs []reserve.Commitment
	for _, b := range bs {
		cs = append(cs, settings.Commitments(b, inv)...)
	}
	cal := reserve.NewCalendar(reserve.Capacity{Resource: "gpu:h100", Total: capacity}, cs)
	for _, seg := range cal.Segments(hour(-1), hour(10)) {
		if seg.Committed > capacity {
			for _, b := range bs {
				t.Logf("stored: booking %d %s %s %d h100 %v..%v", b.ID, b.Tenant, b.State, b.Count, b.Start.Format("15:04"), b.End.Format("15:04"))
			}
			t.Fatalf("overbooked through Galera: %d of %d h100 from %v to %v", seg.Committed, capacity, seg.From, seg.To)
		}
	}
}
