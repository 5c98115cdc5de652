package reserve_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/reservetest"
)

var base = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)

// randomCase draws a capacity with reductions and overlapping commitments
// (some overbooking, as after a node went down) on a coarse grid so that
// boundaries coincide often.
func randomCase(rng *rand.Rand) (reserve.Capacity, []reserve.Commitment) {
	r := reserve.GPU("h100")
	c := reserve.Capacity{Resource: r, Total: 2 + rng.IntN(8)}
	for range rng.IntN(4) {
		red := reserve.Reduction{Count: 1 + rng.IntN(3), Reason: "x"}
		if rng.IntN(4) > 0 {
			red.Start = base.Add(time.Duration(rng.IntN(100)) * time.Hour)
		}
		if rng.IntN(4) > 0 {
			red.End = base.Add(time.Duration(100+rng.IntN(100)) * time.Hour)
		}
		c.Reductions = append(c.Reductions, red)
	}
	var cs []reserve.Commitment
	for i := range rng.IntN(40) {
		s := base.Add(time.Duration(rng.IntN(200)) * time.Hour).Unix()
		res := r
		if rng.IntN(10) == 0 {
			res = reserve.GPU("other")
		}
		cs = append(cs, reserve.Commitment{Resource: res, Start: s, End: s + int64(1+rng.IntN(50))*3600, Count: 1 + rng.IntN(3), Booking: int64(i + 1)})
	}
	return c, cs
}

// TestCalendarMatchesNaiveScan: on random inputs the calendar's step
// function, minimum free, timeline and earliest slot equal a naive scan of
// every commitment at every instant.
func TestCalendarMatchesNaiveScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 400 {
		c, cs := randomCase(rng)
		cal := reserve.NewCalendar(c, cs)
		nv := reservetest.Naive{Capacity: c, Commits: cs}
		for h := -2; h < 260; h++ {
			at := base.Add(time.Duration(h)*time.Hour + time.Duration(rng.IntN(3600))*time.Second)
			gc, gu := cal.At(at)
			wc, wu := nv.At(at)
			if gc != wc || gu != wu {
				t.Fatalf("iter %d at %v: calendar %d/%d, naive %d/%d", iter, at, gc, gu, wc, wu)
			}
		}
		from := base.Add(time.Duration(rng.IntN(100)) * time.Hour)
		to := from.Add(time.Duration(1+rng.IntN(150)) * time.Hour)
		if g, w := cal.MinFree(from, to), nv.MinFree(from, to); g != w {
			t.Fatalf("iter %d MinFree(%v, %v) = %d; naive %d", iter, from, to, g, w)
		}
		step := []time.Duration{time.Hour, 7 * time.Hour, 24 * time.Hour}[rng.IntN(3)]
		if diff := cmp.Diff(nv.Timeline(from, to, step), cal.Timeline(from, to, step)); diff != "" {
			t.Fatalf("iter %d timeline (-naive +calendar)\n%s", iter, diff)
		}
		need := 1 + rng.IntN(4)
		d := time.Duration(1+rng.IntN(60)) * time.Hour
		last := base.Add(300 * time.Hour)
		slots := reserve.FindSlots([]reserve.Need{{Calendar: cal, Count: need}}, from, d, last, 5)
		want, ok := nv.Earliest(need, from, d, last)
		if !ok {
			if len(slots) != 0 {
				t.Fatalf("iter %d: found %+v; naive finds none", iter, slots)
			}
			continue
		}
		if len(slots) == 0 || !slots[0].Start.Equal(want) {
			t.Fatalf("iter %d: earliest = %+v; naive %v (need %d for %v from %v)", iter, slots, want, need, d, from)
		}
		// Every slot's whole range of starts fits, and the gaps between
		// slots do not.
		for i, s := range slots {
			for _, st := range []time.Time{s.Start, s.Latest} {
				if st.IsZero() {
					continue
				}
				if nv.MinFree(st, st.Add(d)) < need {
					t.Fatalf("iter %d slot %d start %v does not fit", iter, i, st)
				}
			}
			if !s.Latest.IsZero() && nv.MinFree(s.Latest.Add(time.Second), s.Latest.Add(time.Second+d)) >= need && s.Latest.Before(last) {
				t.Fatalf("iter %d slot %d: a start after Latest %v fits too", iter, i, s.Latest)
			}
		}
	}
}

func TestFindSlotsShapes(t *testing.T) {
	c := reserve.Capacity{Resource: "gpu:h100", Total: 4}
	h := func(n int) int64 { return base.Add(time.Duration(n) * time.Hour).Unix() }
	cs := []reserve.Commitment{
		{Resource: "gpu:h100", Start: h(0), End: h(10), Count: 4},
		{Resource: "gpu:h100", Start: h(12), End: h(20), Count: 4},
		{Resource: "gpu:h100", Start: h(30), End: h(40), Count: 2},
	}
	cal := reserve.NewCalendar(c, cs)
	hh := func(n int) time.Time { return base.Add(time.Duration(n) * time.Hour) }
	got := reserve.FindSlots([]reserve.Need{{Calendar: cal, Count: 4}}, base, 2*time.Hour, time.Time{}, 3)
	want := []reserve.Slot{
		{Start: hh(10), End: hh(12), Latest: hh(10)},
		{Start: hh(20), End: hh(22), Latest: hh(28)},
		{Start: hh(40), End: hh(42)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	// A bound on the start clips the open-ended slot.
	got = reserve.FindSlots([]reserve.Need{{Calendar: cal, Count: 4}}, hh(21), 2*time.Hour, hh(50), 5)
	want = []reserve.Slot{{Start: hh(21), End: hh(23), Latest: hh(28)}, {Start: hh(40), End: hh(42)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bounded (-want +got)\n%s", diff)
	}
	// Two needs at once (a node booking: nodes and GPUs) intersect.
	nodes := reserve.NewCalendar(reserve.Capacity{Resource: "node:dgx", Total: 1}, []reserve.Commitment{{Resource: "node:dgx", Start: h(40), End: h(45), Count: 1}})
	got = reserve.FindSlots([]reserve.Need{{Calendar: cal, Count: 4}, {Calendar: nodes, Count: 1}}, hh(39), 2*time.Hour, time.Time{}, 1)
	if diff := cmp.Diff([]reserve.Slot{{Start: hh(45), End: hh(47)}}, got); diff != "" {
		t.Errorf("two needs (-want +got)\n%s", diff)
	}
	if got := reserve.FindSlots(nil, base, time.Hour, time.Time{}, 1); got != nil {
		t.Errorf("no needs: %v", got)
	}
}

func TestTimelineBuckets(t *testing.T) {
	c := reserve.Capacity{Resource: "gpu:h100", Total: 4, Reductions: []reserve.Reduction{{Start: base.Add(30 * time.Hour), End: base.Add(31 * time.Hour), Count: 4, Reason: "m"}}}
	h := func(n int) int64 { return base.Add(time.Duration(n) * time.Hour).Unix() }
	cal := reserve.NewCalendar(c, []reserve.Commitment{{Resource: "gpu:h100", Start: h(2), End: h(26), Count: 3}})
	got := cal.Timeline(base, base.Add(48*time.Hour), 24*time.Hour)
	want := []reserve.Bucket{
		{From: base, To: base.Add(24 * time.Hour), Capacity: 4, Committed: 3, Free: 1},
		{From: base.Add(24 * time.Hour), To: base.Add(48 * time.Hour), Capacity: 0, Committed: 3, Free: 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	segs := cal.Segments(base, base.Add(48*time.Hour))
	if len(segs) != 5 || segs[1].Committed != 3 || segs[3].Capacity != 0 {
		t.Errorf("segments = %+v", segs)
	}
}
