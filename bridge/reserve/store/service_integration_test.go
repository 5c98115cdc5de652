//go:build integration

package store

// Issue 25 items 11, 12 and 13 on the testbed's MariaDB: the booking use
// cases (reserve.Service) over DB with the daemon's pool of 8 connections
// and a Tenants that reads through that pool, as setup.Tenants does.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/store/storetest"
	"github.com/gpubridge/gpubridge/internal/money"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

type fixedPool struct{}

func (fixedPool) Inventory(context.Context) (reserve.Inventory, error) {
	return reserve.Inventory{Nodes: []reserve.Node{
		{Name: "gpu-a", GPUs: map[string]int{"h100": 4}},
		{Name: "gpu-b", GPUs: map[string]int{"1g.10gb": 7, "3g.40gb": 2}},
	}}, nil
}

// poolTenants reads each tenant through the pool (one query), as the
// tenant store does, and gives every tenant policy p.
type poolTenants struct {
	db *sqlx.DB
	p  reserve.Policy
}

func (t poolTenants) BookingTenant(ctx context.Context, name string) (reserve.TenantInfo, error) {
	var one int
	if err := t.db.GetContext(ctx, &one, `SELECT 1`); err != nil {
		return reserve.TenantInfo{}, fmt.Errorf("read tenant %s: %w", name, err)
	}
	return reserve.TenantInfo{Policy: t.p, Own: true}, nil
}

// onePerHour prices booked GPU time at 1.00 EUR per GPU-hour.
type onePerHour struct{}

func (onePerHour) BookedCost(_ string, gpuSeconds int64, _ time.Time) (money.Amount, error) {
	eur, _ := money.ISO("EUR")
	return money.New(gpuSeconds*100/3600, eur), nil
}

var svcNow = time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)

// dbService is a Service over a scratch database, on a pool opened as the
// daemon opens it (sqldb.Open: 8 connections).
func dbService(t *testing.T, p reserve.Policy) (*reserve.Service, *DB, *sqlx.DB) {
	t.Helper()
	e := testbed.Require(t)
	if e.DBDSN == "" {
		t.Fatal("GPUBRIDGE_DB_DSN is not set: `source .testbed/env`")
	}
	ctx := context.Background()
	sc, err := storetest.New(ctx, e.DBDSN, "gpubridge_bksvc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sc.Close() })
	db, err := sqldb.Open(ctx, sc.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st := New(db, "bksvc")
	svc := &reserve.Service{Store: st, Source: fixedPool{}, Tenants: poolTenants{db: db, p: p}, Coster: onePerHour{},
		Settings: reserve.Settings{Prefix: "gpubridge-"}, Now: func() time.Time { return svcNow }}
	return svc, st, db
}

// dayBookings adds n bookings of h100:1 for an hour, each on its own day.
func dayBookings(t *testing.T, svc *reserve.Service, tenant string, n int) []reserve.Booking {
	t.Helper()
	out := make([]reserve.Booking, n)
	for i := range n {
		start := svcNow.Add(time.Duration(i+1) * 24 * time.Hour)
		b, err := svc.Add(context.Background(), "alice", reserve.Request{Tenant: tenant, Kind: reserve.KindGPU, GPUType: "h100", Count: 1, Start: start, End: start.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// TestServiceConcurrentModifies: 40, then 200, modifies at once of
// bookings that do not conflict (each h100:1 on its own day) all finish
// within their timeout, each with its answer, and each answer is stored.
// Before the fix, Modify read the tenant through the pool while holding
// its transaction and the h100 lock row: the waiters held all 8
// connections and none finished (issue 25 item 11).
func TestServiceConcurrentModifies(t *testing.T) {
	for _, n := range []int{40, 200} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			svc, st, _ := dbService(t, reserve.Policy{})
			bs := dayBookings(t, svc, "bkmod", n)
			two := 2 * time.Hour
			errs := make([]error, n)
			answers := make([]reserve.Booking, n)
			var wg sync.WaitGroup
			began := time.Now()
			for i, b := range bs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
					defer cancel()
					_, answers[i], errs[i] = svc.Modify(ctx, "alice", b.ID, reserve.Change{Duration: &two})
				}()
			}
			wg.Wait()
			took := time.Since(began)
			for i, err := range errs {
				if err != nil {
					t.Fatalf("modify %d of %d: %v (after %s)", i, n, err, took)
				}
			}
			for i, b := range bs {
				got, err := st.Get(context.Background(), b.ID)
				if err != nil {
					t.Fatal(err)
				}
				if !got.End.Equal(b.Start.Add(two)) || !got.End.Equal(answers[i].End) || got.Version != answers[i].Version {
					t.Errorf("booking %d: stored end %v version %d; answered %v version %d", b.ID, got.End, got.Version, answers[i].End, answers[i].Version)
				}
			}
			t.Logf("%d concurrent modifies on a pool of 8 connections: %s", n, took)
		})
	}
}

// answer is one successful change of a booking, as the use case answered.
type answer struct {
	op   string
	b    reserve.Booking
	noop bool // a modify that changed nothing (and wrote nothing)
}

// TestServiceRace: 40, then 200, clients modify, cancel and book at once,
// on the same and on different bookings. Every request is answered (a
// success, a problem or a refusal) within its timeout; no two successes
// of one booking were computed from the same version (no change lost);
// and each stored booking is its last successful answer, with an audit
// row for each success and none for a refusal (issue 25 items 11, 12).
func TestServiceRace(t *testing.T) {
	for _, clients := range []int{40, 200} {
		t.Run(fmt.Sprint(clients), func(t *testing.T) {
			svc, st, db := dbService(t, reserve.Policy{})
			bs := dayBookings(t, svc, "bkrace", clients/4)
			var mu sync.Mutex
			won := map[int64][]answer{}
			var wg sync.WaitGroup
			failures := make(chan error, clients)
			for i := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
					defer cancel()
					b := bs[rand.IntN(len(bs))]
					a, err := raceOp(ctx, svc, b, i)
					var ps reserve.Problems
					var ref *reserve.Refusal
					switch {
					case err == nil && a.op != "add":
						mu.Lock()
						won[b.ID] = append(won[b.ID], a)
						mu.Unlock()
					case err == nil, errors.As(err, &ps), errors.As(err, &ref):
					default:
						failures <- fmt.Errorf("client %d (%s on booking %d): %w", i, a.op, b.ID, err)
					}
				}()
			}
			wg.Wait()
			close(failures)
			for err := range failures {
				t.Error(err)
			}
			for _, b := range bs {
				checkLastAnswer(t, st, db, b, won[b.ID])
			}
		})
	}
}

// raceOp is client i's request on booking b: a modify of its window, a
// cancel, a modify of its purpose, or a new booking on its day.
func raceOp(ctx context.Context, svc *reserve.Service, b reserve.Booking, i int) (answer, error) {
	switch i % 4 {
	case 0:
		d := time.Duration(2+i%3) * time.Hour
		before, after, err := svc.Modify(ctx, "alice", b.ID, reserve.Change{Duration: &d})
		return answer{"modify", after, before.Version == after.Version}, err
	case 1:
		out, err := svc.Cancel(ctx, "bob", b.ID)
		return answer{op: "cancel", b: out}, err
	case 2:
		p := fmt.Sprintf("client %d", i)
		before, after, err := svc.Modify(ctx, "carol", b.ID, reserve.Change{Purpose: &p})
		return answer{"purpose", after, before.Version == after.Version}, err
	}
	nb, err := svc.Add(ctx, "dave", reserve.Request{Tenant: "bkrace", Kind: reserve.KindGPU, GPUType: "h100", Count: 2, Start: b.Start, End: b.Start.Add(90 * time.Minute)})
	return answer{op: "add", b: nb}, err
}

// checkLastAnswer: the stored booking is its successful answer of the
// highest version, each success has its own version, and the audit log
// has a row for each success and nothing else.
func checkLastAnswer(t *testing.T, st *DB, db *sqlx.DB, b reserve.Booking, won []answer) {
	t.Helper()
	got, err := st.Get(context.Background(), b.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := answer{op: "add", b: b}
	seen := map[int64]string{}
	for _, a := range won {
		if a.noop {
			continue // nothing written
		}
		if op, dup := seen[a.b.Version]; dup {
			t.Errorf("booking %d: %s and %s both stored version %d: one of them was lost", b.ID, op, a.op, a.b.Version)
		}
		seen[a.b.Version] = a.op
		if a.b.Version > last.b.Version {
			last = a
		}
	}
	if got.Version != last.b.Version || got.State != last.b.State || !got.End.Equal(last.b.End) || got.Purpose != last.b.Purpose {
		t.Errorf("booking %d: stored %s end %v purpose %q version %d; its last successful answer (%s) was %s end %v purpose %q version %d",
			b.ID, got.State, got.End, got.Purpose, got.Version, last.op, last.b.State, last.b.End, last.b.Purpose, last.b.Version)
	}
	var n int
	if err := db.Get(&n, `SELECT COUNT(*) FROM audit_log WHERE object_kind = 'booking' AND object_name = ? AND action <> 'create'`, itoa(b.ID)); err != nil {
		t.Fatal(err)
	}
	if n != len(seen) {
		t.Errorf("booking %d: %d audit rows of changes; %d changes were answered as stored", b.ID, n, len(seen))
	}
}

// TestServiceSpendLimitAcrossTypes: three 40-hour bookings of one GPU of
// h100, 1g.10gb and 3g.40gb in one month, made at once under a monthly
// spend limit of 100.00 at 1.00 per GPU-hour, never all pass (120.00):
// each round admits two. Before the fix admission locked only the booked
// type's row while the limit sums every type (issue 25 item 13).
func TestServiceSpendLimitAcrossTypes(t *testing.T) {
	limit := money.MustParse("100.00")
	svc, _, _ := dbService(t, reserve.Policy{MonthlySpendLimit: &limit})
	types := []string{"h100", "1g.10gb", "3g.40gb"}
	for round := range 12 {
		tenant := fmt.Sprintf("bkspend%d", round)
		start := time.Date(2031, time.Month(2+round), 2, 0, 0, 0, 0, time.UTC) // a month each: the pool has room
		var wg sync.WaitGroup
		admitted := make([]bool, len(types))
		for i, typ := range types {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := svc.Add(context.Background(), "alice", reserve.Request{Tenant: tenant, Kind: reserve.KindGPU, GPUType: typ, Count: 1, Start: start, End: start.Add(40 * time.Hour)})
				var ps reserve.Problems
				switch {
				case err == nil:
					admitted[i] = true
				case !errors.As(err, &ps):
					t.Errorf("round %d, %s: %v", round, typ, err)
				}
			}()
		}
		wg.Wait()
		n := 0
		for _, ok := range admitted {
			if ok {
				n++
			}
		}
		if n != 2 {
			t.Errorf("round %d: %d of 3 admitted (%v); want 2 (80.00 of the 100.00 limit)", round, n, admitted)
		}
	}
}
