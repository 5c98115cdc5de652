//go:build integration

package main

// What gpubridge admits, Slurm must hold (issue 25 item 15): a Slurm GPU
// reservation holds particular GPUs of a node for its whole window, so a
// node's GPUs fragment; the projector moves reservations that have not
// started so that every admitted booking gets its reservation. On the real
// testbed (gpu-a: 4 h100; gpu-b: 7 1g.10gb and 2 3g.40gb), in a scratch
// store, under a reservation prefix of the test's own (newBookingIT).

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/internal/slurmstr"
)

// newFragIT is newBookingIT with a lead time of 12 h, so that every
// reservation of the test is made at once (the fragments form in Slurm),
// and the account bkfrag as a tenant of the scratch store.
func newFragIT(t *testing.T) *bookingIT {
	h := newBookingIT(t, "bkfrag")
	cfg := filepath.Join(t.TempDir(), "gpubridge.yaml")
	if err := os.WriteFile(cfg, []byte("version: 1\nbookings:\n  leadTime: 12h\n  defaultPolicy:\n    maxWindow: 30d\n    maxHorizon: 365d\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GPUBRIDGE_CONFIG", cfg)
	h.ok("-i", "add", "tenant", "bkfrag", "users=alice", "gpus=h100:0,1g.10gb:0,3g.40gb:0",
		"booking.maxgpus=h100:64,1g.10gb:64,3g.40gb:64") // the pool, not the quota-bounded default, limits its bookings
	return h
}

// requireIdle fails unless no reservation but the test's own holds GPUs of
// the pool in [from, to): the sequence needs the node's GPUs to itself.
func (h *bookingIT) requireIdle(from, to time.Time) {
	h.t.Helper()
	all, err := h.slurm.ListReservations(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	for _, r := range all {
		if !strings.HasPrefix(r.Name, h.prefix) && r.Start.Before(to) && r.End.After(from) && (strings.Contains(r.TRES, "gres/gpu") || strings.Contains(r.Nodes, "gpu-")) {
			h.t.Fatalf("reservation %s (%s, %v..%v) holds GPUs of the pool in the test's window; delete it or rerun later", r.Name, r.TRES, r.Start, r.End)
		}
	}
}

// addGPUs books count GPUs of typ; ok false when admission refused it.
func (h *bookingIT) addGPUs(typ string, count int, start time.Time, d time.Duration) (reserve.Booking, bool) {
	h.t.Helper()
	out, errs, code := h.cli("-i", "--json", "add", "booking", "tenant=bkfrag", fmt.Sprintf("gpus=%s:%d", typ, count),
		"start="+start.UTC().Format(time.RFC3339), "duration="+reserve.FormatDuration(d))
	switch code {
	case 0:
	case 1:
		if !strings.Contains(errs, "booking refused") {
			h.t.Fatalf("add booking %s:%d: exit 1 but not a refusal:\n%s", typ, count, errs)
		}
		return reserve.Booking{}, false
	default:
		h.t.Fatalf("add booking %s:%d: exit %d\n%s", typ, count, code, errs)
	}
	var b reserve.Booking
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		h.t.Fatal(err)
	}
	return b, true
}

// project runs `gpubridge project` and returns its output.
func (h *bookingIT) project() string {
	h.t.Helper()
	out, errs, code := h.cli("project")
	if code != 0 {
		h.t.Fatalf("project: exit %d\n%s\n%s", code, out, errs)
	}
	return out
}

// requireHeld checks the invariant: every booking of the scratch store that
// is neither cancelled nor over holds a Slurm reservation of its count of
// its type before its start, and is not at risk.
func (h *bookingIT) requireHeld(now time.Time) {
	h.t.Helper()
	n := 0
	for _, b := range h.stored() {
		if b.Cancelled() || !now.Before(b.End) {
			continue
		}
		n++
		name := h.prefix + strconv.FormatInt(b.ID, 10)
		r, err := h.slurm.GetReservation(context.Background(), name)
		if err != nil {
			h.t.Errorf("booking %d (%s %v..%v): no reservation %s: %v; state %s, note %q", b.ID, b.What(), b.Start, b.End, name, err, b.State, b.Note)
			continue
		}
		got := 0
		ts, err := slurmstr.ParseTRES(r.TRES)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, x := range ts {
			if typ, ok := x.GPU(); ok && typ == b.GPUType {
				got += int(x.Count)
			}
		}
		if got != b.Count || !r.Start.Equal(b.Start) || !r.End.Equal(b.End) {
			h.t.Errorf("booking %d (%s %v..%v): reservation %s holds %s over %v..%v", b.ID, b.What(), b.Start, b.End, name, r.TRES, r.Start, r.End)
		}
		if b.State == reserve.StateAtRisk || b.Held.Count != b.Count {
			h.t.Errorf("booking %d: state %s, held %+v, note %q", b.ID, b.State, b.Held, b.Note)
		}
	}
	h.t.Logf("%d admitted booking(s) hold their reservations", n)
}

// TestBookingFragmentedGPUsOnTestbed is issue 25's sequence: v = h100:2
// [T+1h, T+2h), q = h100:2 in the same window, cancel v, u = h100:2
// [T, T+30m), then s = h100:2 [T, T+2h), with `gpubridge project` after
// each step. Slurm put q on GPUs 2-3 and u on 0-1, so s (2 of 4 free at
// every instant) fits no 2 GPUs for its whole window: on main its
// reservation failed with 2016 for ever. Now the projector moves q (and u,
// not started either) and s is created.
func TestBookingFragmentedGPUsOnTestbed(t *testing.T) {
	h := newFragIT(t)
	T := time.Now().UTC().Truncate(time.Minute).Add(30 * time.Minute)
	h.requireIdle(T, T.Add(2*time.Hour))
	mustAdd := func(start time.Time, d time.Duration) reserve.Booking {
		t.Helper()
		b, ok := h.addGPUs("h100", 2, start, d)
		if !ok {
			t.Fatalf("h100:2 %v +%v refused", start, d)
		}
		h.project()
		return b
	}
	v := mustAdd(T.Add(time.Hour), time.Hour)
	q := mustAdd(T.Add(time.Hour), time.Hour)
	h.ok("-i", "delete", "booking", strconv.FormatInt(v.ID, 10))
	h.project()
	u := mustAdd(T, 30*time.Minute)
	// The fragment: q holds the GPUs bound to cores 4-7 (GPUs 2-3).
	if cores := h.coreIDs(q.ID); cores != "4-7" {
		t.Fatalf("q holds cores %q; want 4-7 (GPUs 2-3) for the fragment to form", cores)
	}
	s, ok := h.addGPUs("h100", 2, T, 2*time.Hour)
	if !ok {
		t.Fatal("s refused: 2 of 4 h100 are free at every instant of its window")
	}
	out := h.project()
	t.Logf("project:\n%s", out)
	for _, w := range []string{
		fmt.Sprintf("recreate reservation %s%d", h.prefix, q.ID),
		fmt.Sprintf("create reservation %s%d", h.prefix, s.ID),
	} {
		if !strings.Contains(out, w) {
			t.Errorf("project output lacks %q", w)
		}
	}
	h.requireHeld(time.Now())
	for id, want := range map[int64]string{q.ID: "0-3", u.ID: "0-3", s.ID: "4-7"} {
		if got := h.coreIDs(id); got != want {
			t.Errorf("booking %d holds cores %q; want %s", id, got, want)
		}
	}
	if out := h.project(); !strings.Contains(out, "0 action(s)") {
		t.Errorf("second projection is not a no-op:\n%s", out)
	}
}

// coreIDs are the cores a booking's reservation holds on its node, as
// scontrol shows them (gpu-a binds h100 i to cores 2i, 2i+1).
func (h *bookingIT) coreIDs(id int64) string {
	h.t.Helper()
	out := h.env.Exec(h.t, "", "scontrol", "show", "reservation", h.prefix+strconv.FormatInt(id, 10))
	for _, f := range strings.Fields(out) {
		if v, ok := strings.CutPrefix(f, "CoreIDs="); ok {
			return v
		}
	}
	return ""
}

// TestBookingFragmentsRandomOnTestbed: random books and cancels of h100
// (gpu-a) and MIG profiles (gpu-b), in two to four rounds of two hours
// each on a 15-minute grid (until fragments made the projector move a
// reservation), `gpubridge project` after each step; every booking
// admitted and not cancelled ends with a reservation of its count before
// its start. The seed is printed (GPUBRIDGE_FRAG_SEED replays one).
func TestBookingFragmentsRandomOnTestbed(t *testing.T) {
	h := newFragIT(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("GPUBRIDGE_FRAG_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = v
	}
	t.Logf("seed %d (GPUBRIDGE_FRAG_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 15))
	T := time.Now().UTC().Truncate(time.Minute).Add(30 * time.Minute)
	h.requireIdle(T, T.Add(12*time.Hour))
	admitted, refused, cancelled, moves := 0, 0, 0, 0
	// Rounds until one made the projector move a reservation (most seeds
	// do in the first), at most four.
	for round := 0; round < 4 && (round < 2 || moves == 0); round++ {
		base := T.Add(time.Duration(round) * 3 * time.Hour)
		var live []reserve.Booking
		for range 30 {
			if len(live) > 2 && rng.IntN(3) == 0 {
				k := rng.IntN(len(live))
				h.ok("-i", "delete", "booking", strconv.FormatInt(live[k].ID, 10))
				live = append(live[:k], live[k+1:]...)
				cancelled++
			} else {
				typ, most := fragType(rng)
				start := base.Add(time.Duration(rng.IntN(8)) * 15 * time.Minute)
				d := time.Duration(1+rng.IntN(6)) * 15 * time.Minute
				if b, ok := h.addGPUs(typ, 1+rng.IntN(most), start, d); ok {
					live = append(live, b)
					admitted++
				} else {
					refused++
				}
			}
			moves += strings.Count(h.project(), "(GPUs fragmented) done")
		}
	}
	t.Logf("%d admitted, %d refused, %d cancelled; %d reservation(s) moved to make room", admitted, refused, cancelled, moves)
	h.requireHeld(time.Now())
}

// fragType draws a GPU type of the testbed and the most to book of it at
// once (half of gpu-a's h100: fragments form).
func fragType(rng *rand.Rand) (string, int) {
	switch rng.IntN(4) {
	case 0:
		return "1g.10gb", 4
	case 1:
		return "3g.40gb", 1
	}
	return "h100", 2
}

// TestBookingUnprojectableReportedAtOnce: a reservation made by hand after
// a booking was admitted takes the GPUs it needs; the projection cannot
// make room (the hand-made reservation is not gpubridge's to move), so the
// booking is at risk at once, hours before its start, with why, in
// `gpubridge project` and `show bookings`. On main it stayed `requested`.
func TestBookingUnprojectableReportedAtOnce(t *testing.T) {
	h := newFragIT(t)
	T := time.Now().UTC().Truncate(time.Minute).Add(2 * time.Hour)
	h.requireIdle(T, T.Add(time.Hour))
	b, ok := h.addGPUs("h100", 3, T, time.Hour)
	if !ok {
		t.Fatal("h100:3 refused")
	}
	// Not gpubridge's: a name without the test's prefix.
	other := strings.TrimSuffix(h.prefix, "-") + "x-admin"
	h.env.Exec(t, "", "scontrol", "create", "reservation="+other, "accounts=bkfrag", "starttime="+T.Add(-30*time.Minute).Format("2006-01-02T15:04:05"),
		"duration=120", "tres=gres/gpu:h100=2", "flags=ignore_jobs")
	t.Cleanup(func() { h.env.Run(context.Background(), "", nil, "scontrol", "delete", "reservation="+other) })
	out := h.project()
	t.Logf("project:\n%s", out)
	for _, w := range []string{"at risk", "no placement of the bookings on the nodes' h100 GPUs holds it"} {
		if !strings.Contains(out, w) {
			t.Errorf("project output lacks %q", w)
		}
	}
	show := h.ok("show", "bookings", strconv.FormatInt(b.ID, 10))
	t.Logf("show bookings:\n%s", show)
	var bs []reserve.Booking
	if err := json.Unmarshal([]byte(h.ok("--json", "show", "bookings", strconv.FormatInt(b.ID, 10))), &bs); err != nil || len(bs) != 1 {
		t.Fatalf("show bookings --json: %v %v", err, bs)
	}
	if bs[0].State != reserve.StateAtRisk || !strings.Contains(bs[0].Note, "Slurm has no room") {
		t.Errorf("booking %d: %s, note %q; want at-risk with why", b.ID, bs[0].State, bs[0].Note)
	}
}
