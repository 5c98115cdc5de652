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
	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
)

// TestNodeBookingChargedOnTestbed: whole-node bookings of a node class of
// the test's own (nbkc<n>: gpu-a) for a tenant of its own (nbk<n>), in a
// scratch store and ledger. Admission records gpu-a's h100 count as
// slurmctld reports it (read independently with scontrol); `charge
// bookings` charges each booking count x that x its window GPU-seconds of
// h100 (equal to a recomputation from the stored times); a re-run writes
// nothing. A node booking stored without the figure blocks the charge and
// the close, naming the fix; one still ahead takes the figure from the
// pool with any change (`modify booking N set purpose=...`), one that has
// ended is given it by the admin (`modify booking N set pernode=h100:4`,
// alone; never over a recorded figure). Then the close of the month of the
// node bookings (one admitted on a clock in that month, one ended there)
// succeeds and each bill is count x GPUs x hours at the booked rate.
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
	h.ok("-i", "add", "tenant", acct, "users=alice", "gpus=h100:0", "booking.maxgpus=h100:64")
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
	// Two stored without the figure, as before admission recorded it: one
	// ahead, one that ended in 2024-07.
	st := store.New(h.scratch.DB, h.env.Cluster)
	var old, ended reserve.Booking
	if err := st.Atomic(ctx, nil, func(tx reserve.Tx) error {
		old, err = tx.Insert(ctx, "nodecharge-test", reserve.Booking{Tenant: acct, Kind: reserve.KindNode, NodeClass: class, Count: 1,
			Start: base.Add(5 * time.Hour), End: base.Add(6 * time.Hour), State: reserve.StateRequested, CreatedBy: "nodecharge-test",
			CreatedAt: time.Now(), UpdatedAt: time.Now()})
		if err != nil {
			return err
		}
		ended, err = tx.Insert(ctx, "nodecharge-test", reserve.Booking{Tenant: acct, Kind: reserve.KindNode, NodeClass: class, Count: 1,
			Start: july.Add(5 * time.Hour), End: july.Add(6 * time.Hour), State: reserve.StateScheduled, CreatedBy: "nodecharge-test",
			CreatedAt: july.Add(-time.Hour), UpdatedAt: july.Add(-time.Hour)})
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

	// Charged, except the ones without the figure: named, with the fix.
	oldID, endedID := strconv.FormatInt(old.ID, 10), strconv.FormatInt(ended.ID, 10)
	out, errs, code := h.cli("charge", "bookings")
	t.Logf("$ gpubridge charge bookings\n%s%s(exit %d)", out, errs, code)
	for _, id := range []string{oldID, endedID} {
		if code != 1 || !strings.Contains(errs, "booking "+id+" (node:"+class+":1, whole nodes)") || !strings.Contains(errs, "gpubridge modify booking "+id+" set pernode=TYPE:COUNT") {
			t.Errorf("charge with unrecorded node booking %s: exit %d\n%s%s", id, code, out, errs)
		}
	}
	h.ok("add", "rate", "type=h100", "tier=booked", "price=36.00", "from=2020-01-01", "currency=EUR")
	if _, errs, code := h.cli("-i", "close", "period=2024-07", "ingest=no"); code != 1 || !strings.Contains(errs, "booking "+oldID) || !strings.Contains(errs, "booking "+endedID) {
		t.Errorf("close with unrecorded node bookings: exit %d\n%s", code, errs)
	}
	h.ok("-i", "modify", "booking", oldID, "set", "purpose=recorded")
	// The ended one: only the admin's figure, alone, and never over one
	// already recorded.
	for what, c := range map[string]struct {
		args []string
		want string
	}{
		"ended, any change": {[]string{"modify", "booking", endedID, "set", "purpose=x"}, "booking " + endedID + " is ended; it cannot change"},
		"not alone":         {[]string{"modify", "booking", endedID, "set", "pernode=h100:4", "purpose=x"}, "pernode=: give it alone"},
		"bad figure":        {[]string{"modify", "booking", endedID, "set", "pernode=h100:four"}, `count "four" is not a whole number`},
		"recorded already":  {[]string{"modify", "booking", oldID, "set", "pernode=h100:8"}, "booking " + oldID + " already records h100:" + strconv.Itoa(perNode) + " per node"},
	} {
		out, errs, code := h.cli(append([]string{"-i"}, c.args...)...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, want non-zero and %q\n%s%s", what, code, c.want, out, errs)
		}
		t.Logf("$ gpubridge -i %s\n%s(exit %d)", strings.Join(c.args, " "), errs, code)
	}
	out = h.ok("-i", "modify", "booking", endedID, "set", "pernode=h100:"+strconv.Itoa(perNode))
	t.Logf("$ gpubridge -i modify booking %s set pernode=h100:%d\n%s", endedID, perNode, out)
	if !strings.Contains(out, fmt.Sprintf("recorded h100:%d GPUs per node", perNode)) {
		t.Errorf("record per node: %s", out)
	}
	if got, err := st.Get(ctx, ended.ID); err != nil || !cmp.Equal(got.PerNode, map[string]int{"h100": perNode}) || !got.Start.Equal(ended.Start) || !got.End.Equal(ended.End) {
		t.Errorf("booking %s after pernode=: %+v %v", endedID, got, err)
	}
	out = h.ok("charge", "bookings")
	t.Logf("$ gpubridge charge bookings\n%s", out)
	if out := h.ok("charge", "bookings"); !strings.Contains(out, " 0 ledger line(s) written, 0 correction(s)") {
		t.Errorf("re-run: %s", out)
	}

	// The ledger against a recomputation from the stored bookings.
	lg := ledger.NewDB(h.scratch.DB, nil)
	for _, id := range []int64{now.ID, past.ID, old.ID, ended.ID} {
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
	for _, b := range []reserve.Booking{past, ended} {
		sec := int64(b.Count) * int64(perNode) * (b.End.Unix() - b.Start.Unix())
		want := new(big.Rat).SetFrac64(sec*36, 3600)
		found := false
		for _, r := range rows[1:] {
			if r[col["kind"]] != "booking" || r[col["booking"]] != strconv.FormatInt(b.ID, 10) {
				continue
			}
			found = true
			got, ok := new(big.Rat).SetString(r[col["amount"]])
			if !ok || got.Cmp(want) != 0 || r[col["booked_gpu_seconds"]] != strconv.FormatInt(sec, 10) || r[col["status"]] != "closed" {
				t.Errorf("booking %d's line %v: want %d GPU-seconds, amount %s, closed", b.ID, r, sec, want.FloatString(2))
			}
		}
		if !found {
			t.Errorf("export: no line of booking %d:\n%s", b.ID, out)
		}
	}
}
