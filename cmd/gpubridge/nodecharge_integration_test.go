//go:build integration

package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/store"
	"github.com/gpubridge/gpubridge/internal/app"
)

// TestNodeBookingChargedOnTestbed: whole-node bookings of a node class of
// the test's own (nbkc<n>: gpu-a) for a tenant of its own (nbk<n>), in a
// scratch store and ledger. Admission records gpu-a's h100 count as
// slurmctld reports it (read independently with scontrol); `charge
// bookings` charges each booking count x that x its window GPU-seconds of
// h100 (equal to a recomputation from the stored times); a re-run writes
// nothing. A node booking stored without the figure blocks the charge and
// the close, naming the fix; after the fix (`modify booking N set
// purpose=...`) the close of the month of a node booking (admitted on a
// clock in that month) succeeds and its bill is count x GPUs x hours at the
// booked rate.
func TestNodeBookingChargedOnTestbed(t *testing.T) {
	n := rand.IntN(1e5)
	acct, class := fmt.Sprintf("nbk%05d", n), fmt.Sprintf("nbkc%05d", n)
	h := newBookingIT(t)
	cfg := filepath.Join(t.TempDir(), "gpubridge.yaml")
	conf := fmt.Sprintf("version: 1\nbookings:\n  leadTime: 1h\n  nodeClasses: {%s: [gpu-a]}\n  defaultPolicy:\n    maxWindow: 30d\n    maxHorizon: 365d\n", class)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GPUBRIDGE_CONFIG", cfg)
	h.ok("-i", "add", "tenant", acct, "users=alice", "gpus=h100:0")
	ctx := context.Background()

	// gpu-a's h100, as slurmctld reports them.
	m := regexp.MustCompile(`Gres=gpu:h100:(\d+)`).FindStringSubmatch(h.env.Exec(t, "", "scontrol", "show", "node", "gpu-a"))
	if m == nil {
		t.Fatal("scontrol show node gpu-a: no Gres=gpu:h100:N")
	}
	perNode, _ := strconv.Atoi(m[1])
	if perNode != 4 {
		t.Errorf("gpu-a has %d h100; the testbed has 4", perNode)
	}

	// A node booking admitted now, through the CLI, 3 days ahead.
	base := time.Now().UTC().Truncate(time.Hour).Add(72 * time.Hour)
	var now reserve.Booking
	if err := json.Unmarshal([]byte(h.ok("-i", "--json", "add", "booking", "tenant="+acct, "nodes="+class+":1",
		"start="+base.Format(time.RFC3339), "duration=2h", "purpose=nodecharge")), &now); err != nil {
		t.Fatal(err)
	}
	// One admitted on a clock in 2024-07 (so that its month can be
	// closed), against the real pool.
	e := &app.Env{}
	t.Cleanup(e.Close)
	bk, err := e.Bookings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	july := time.Date(2024, 7, 10, 0, 0, 0, 0, time.UTC)
	bk.Service.Now = func() time.Time { return july.Add(-time.Hour) }
	past, err := bk.Service.Add(ctx, "nodecharge-test", reserve.Request{Tenant: acct, Kind: reserve.KindNode, NodeClass: class, Count: 1,
		Start: july, End: july.Add(3 * time.Hour), Purpose: "closed month"})
	if err != nil {
		t.Fatal(err)
	}
	// One stored without the figure, as before admission recorded it.
	st := store.New(h.scratch.DB, h.env.Cluster)
	var old reserve.Booking
	if err := st.Atomic(ctx, nil, func(tx reserve.Tx) error {
		old, err = tx.Insert(ctx, "nodecharge-test", reserve.Booking{Tenant: acct, Kind: reserve.KindNode, NodeClass: class, Count: 1,
			Start: base.Add(5 * time.Hour), End: base.Add(6 * time.Hour), State: reserve.StateRequested, CreatedBy: "nodecharge-test",
			CreatedAt: time.Now(), UpdatedAt: time.Now()})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []reserve.Booking{now, past} {
		got, err := st.Get(ctx, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(map[string]int{"h100": perNode}, got.PerNode); d != "" {
			t.Errorf("booking %d's recorded GPUs per node (-want +got)\n%s", b.ID, d)
		}
	}

	// Charged, except the one without the figure: named, with the fix.
	oldID := strconv.FormatInt(old.ID, 10)
	out, errs, code := h.cli("charge", "bookings")
	t.Logf("$ gpubridge charge bookings\n%s%s(exit %d)", out, errs, code)
	if code != 1 || !strings.Contains(errs, "booking "+oldID+" (node:"+class+":1, whole nodes)") || !strings.Contains(errs, "gpubridge modify booking "+oldID+" set") {
		t.Errorf("charge with an unrecorded node booking: exit %d\n%s%s", code, out, errs)
	}
	h.ok("add", "rate", "type=h100", "tier=booked", "price=36.00", "from=2020-01-01", "currency=EUR")
	if _, errs, code := h.cli("-i", "close", "period=2024-07", "ingest=no"); code != 1 || !strings.Contains(errs, "booking "+oldID) {
		t.Errorf("close with an unrecorded node booking: exit %d\n%s", code, errs)
	}
	h.ok("-i", "modify", "booking", oldID, "set", "purpose=recorded")
	out = h.ok("charge", "bookings")
	t.Logf("$ gpubridge charge bookings\n%s", out)
	if out := h.ok("charge", "bookings"); !strings.Contains(out, " 0 ledger line(s) written, 0 correction(s)") {
		t.Errorf("re-run: %s", out)
	}

	// The ledger against a recomputation from the stored bookings.
	lg := ledger.NewDB(h.scratch.DB, nil)
	for _, id := range []int64{now.ID, past.ID, old.ID} {
		b, err := st.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		want := int64(b.Count) * int64(perNode) * (b.End.Unix() - b.Start.Unix())
		var got int64
		var types []string
		if err := lg.Charges(ctx, h.env.Cluster, ledger.LineQuery{Booked: meter.PeriodOf(b.Start), Account: acct}, func(l meter.Line) error {
			if l.Booking == id {
				got += l.GPUSeconds
				types = append(types, l.Type)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if got != want || !cmp.Equal(types, []string{"h100"}) {
			t.Errorf("booking %d charged %d GPU-seconds of %v, want count %d x %d h100 x %d s = %d", id, got, types, b.Count, perNode, b.End.Unix()-b.Start.Unix(), want)
		}
	}

	// The month of the past booking closes (once ingested: the testbed's
	// Slurm ran no jobs then); its bill is 1 x 4 x 3h at 36.00.
	h.ok("ingest", "from=2024-07-01", "to=2024-08-01")
	out = h.ok("-i", "close", "period=2024-07", "ingest=no")
	if !strings.Contains(out, "closed 2024-07") {
		t.Errorf("close: %s", out)
	}
	out = h.ok("export", "chargeback", "period=2024-07", "format=csv", "tenant="+acct)
	t.Logf("$ gpubridge export chargeback period=2024-07 format=csv tenant=%s\n%s", acct, out)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("export: %v\n%s", err, out)
	}
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	pastSec := int64(past.Count) * int64(perNode) * (past.End.Unix() - past.Start.Unix())
	want := new(big.Rat).SetFrac64(pastSec*36, 3600)
	found := false
	for _, r := range rows[1:] {
		if r[col["kind"]] != "booking" || r[col["booking"]] != strconv.FormatInt(past.ID, 10) {
			continue
		}
		found = true
		got, ok := new(big.Rat).SetString(r[col["amount"]])
		if !ok || got.Cmp(want) != 0 || r[col["gpu_seconds"]] != strconv.FormatInt(pastSec, 10) || r[col["status"]] != "closed" {
			t.Errorf("booking %d's line %v: want %d GPU-seconds, amount %s, closed", past.ID, r, pastSec, want.FloatString(2))
		}
	}
	if !found {
		t.Errorf("export: no line of booking %d:\n%s", past.ID, out)
	}
}
