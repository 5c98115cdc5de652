package reserve

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/gpubridge/gpubridge/internal/interval"
)

// Instants are Unix seconds; these stand for the beginning and the end of
// time.
const (
	beginning int64 = math.MinInt64
	forever   int64 = math.MaxInt64
)

func unix(t time.Time) int64 {
	if t.IsZero() {
		return beginning
	}
	return t.Unix()
}

func unixEnd(t time.Time) int64 {
	if t.IsZero() {
		return forever
	}
	return t.Unix()
}

func fromUnix(v int64) time.Time {
	if v == beginning || v == forever {
		return time.Time{}
	}
	return time.Unix(v, 0).UTC()
}

// Commitment is capacity a booking takes from one resource over
// [Start, End) (Unix seconds).
type Commitment struct {
	Resource Resource
	Start    int64
	End      int64
	Count    int
	Booking  int64
	Tenant   string
}

// Commitments returns what a booking takes from each resource: its window
// and count, combined with what Slurm still holds for it (Held) by taking
// the larger at every instant; only what Slurm holds when it is cancelled.
// A node booking takes its nodes from the class and their GPUs from each
// type (per node as Settings.classPerNode; the GPUs of the very nodes Slurm
// placed it on, when known).
func (s Settings) Commitments(b Booking, inv Inventory) []Commitment {
	return s.AppendCommitments(nil, b, inv)
}

// AppendCommitments appends b's commitments to dst (Commitments without an
// allocation per booking).
func (s Settings) AppendCommitments(dst []Commitment, b Booking, inv Inventory) []Commitment {
	if b.Kind == KindGPU && b.Held.IsZero() {
		// The common case, without the general merge below.
		if b.Cancelled() || !b.End.After(b.Start) || b.Count <= 0 {
			return dst
		}
		return append(dst, Commitment{Resource: GPU(b.GPUType), Start: b.Start.Unix(), End: b.End.Unix(), Count: b.Count, Booking: b.ID, Tenant: b.Tenant})
	}
	return append(dst, s.commitments(b, inv)...)
}

// commitments are booking b's commitments in general: per resource, the
// larger of what the ledger admitted and what Slurm holds, at every
// instant.
func (s Settings) commitments(b Booking, inv Inventory) []Commitment {
	var ledger, held []piece
	if !b.Cancelled() && b.End.After(b.Start) && b.Count > 0 {
		ledger = append(ledger, piece{interval.Interval{Start: b.Start.Unix(), End: b.End.Unix()}, b.Count})
	}
	if !b.Held.IsZero() && b.Held.End.After(b.Held.Start) && b.Held.Count > 0 {
		held = append(held, piece{interval.Interval{Start: b.Held.Start.Unix(), End: b.Held.End.Unix()}, b.Held.Count})
	}
	ledgerPer, heldPer := s.perUnit(b, inv)
	var out []Commitment
	for _, r := range slices.Sorted(mapsKeys(ledgerPer, heldPer)) {
		var ps []piece
		for _, p := range ledger {
			if ledgerPer[r] > 0 {
				ps = append(ps, piece{p.Interval, p.count * ledgerPer[r]})
			}
		}
		for _, p := range held {
			if heldPer[r] > 0 {
				ps = append(ps, piece{p.Interval, p.count * heldPer[r]})
			}
		}
		switch len(ps) {
		case 0:
			continue
		case 1:
			out = append(out, Commitment{Resource: r, Start: ps[0].Start, End: ps[0].End, Count: ps[0].count, Booking: b.ID, Tenant: b.Tenant})
			continue
		}
		out = appendLarger(out, r, ps, b)
	}
	return out
}

// piece is a count of a resource over an interval.
type piece struct {
	interval.Interval
	count int
}

// perUnit is how much of each resource one unit of booking b takes, for
// the ledger's part and for the part Slurm holds: one of its own resource,
// and for a node booking the GPUs per node of its class (where Slurm
// placed it, those nodes' GPUs per node on average, rounded up, never less
// than the class's).
func (s Settings) perUnit(b Booking, inv Inventory) (ledgerPer, heldPer map[Resource]int) {
	own := b.Resource()
	ledgerPer = map[Resource]int{own: 1}
	heldPer = map[Resource]int{own: 1}
	if b.Kind != KindNode {
		return ledgerPer, heldPer
	}
	for t, c := range s.classPerNode(inv, b.NodeClass) {
		ledgerPer[GPU(t)] = c
		heldPer[GPU(t)] = c
	}
	if len(b.Held.Nodes) == 0 {
		return ledgerPer, heldPer
	}
	sum := map[string]int{}
	for _, nn := range b.Held.Nodes {
		if n, ok := inv.node(nn); ok {
			for t, c := range n.GPUs {
				sum[t] += c
			}
		}
	}
	for t, c := range sum {
		per := (c + len(b.Held.Nodes) - 1) / len(b.Held.Nodes)
		heldPer[GPU(t)] = max(heldPer[GPU(t)], per)
	}
	return ledgerPer, heldPer
}

// appendLarger appends to out booking b's commitments of resource r from
// two pieces ps: the larger count at every instant, adjacent spans of one
// count joined.
func appendLarger(out []Commitment, r Resource, ps []piece, b Booking) []Commitment {
	cuts := []int64{ps[0].Start, ps[0].End, ps[1].Start, ps[1].End}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	for i := 0; i+1 < len(cuts); i++ {
		a, z := cuts[i], cuts[i+1]
		n := 0
		for _, p := range ps {
			if p.Covers(interval.Interval{Start: a, End: z}) {
				n = max(n, p.count)
			}
		}
		if n == 0 {
			continue
		}
		if k := len(out) - 1; k >= 0 && out[k].Resource == r && out[k].End == a && out[k].Count == n {
			out[k].End = z
			continue
		}
		out = append(out, Commitment{Resource: r, Start: a, End: z, Count: n, Booking: b.ID, Tenant: b.Tenant})
	}
	return out
}

func mapsKeys(ms ...map[Resource]int) func(func(Resource) bool) {
	return func(yield func(Resource) bool) {
		seen := map[Resource]bool{}
		for _, m := range ms {
			for k := range m {
				if !seen[k] {
					seen[k] = true
					if !yield(k) {
						return
					}
				}
			}
		}
	}
}

// Calendar is one resource's capacity and committed count at every
// instant: a step function over Unix seconds. Step i holds from at[i] up to
// at[i+1] (the last one forever); at[0] is the beginning of time.
type Calendar struct {
	Resource Resource
	at       []int64
	cap      []int
	used     []int
	commits  []Commitment // sorted by Start
}

// NewCalendar builds the calendar of c.Resource from its capacity and the
// commitments (those of other resources are ignored), in O(n log n).
func NewCalendar(c Capacity, cs []Commitment) *Calendar {
	type ev struct {
		t           int64
		dcap, dused int
	}
	evs := make([]ev, 0, 2*len(cs)+2*len(c.Reductions))
	for _, r := range c.Reductions {
		s, e := unix(r.Start), unixEnd(r.End)
		if e <= s || r.Count <= 0 {
			continue
		}
		evs = append(evs, ev{t: s, dcap: -r.Count})
		if e != forever {
			evs = append(evs, ev{t: e, dcap: r.Count})
		}
	}
	cal := &Calendar{Resource: c.Resource}
	for _, m := range cs {
		if m.Resource != c.Resource || m.End <= m.Start || m.Count <= 0 {
			continue
		}
		evs = append(evs, ev{t: m.Start, dused: m.Count}, ev{t: m.End, dused: -m.Count})
		cal.commits = append(cal.commits, m)
	}
	slices.SortFunc(evs, func(a, b ev) int { return cmp.Compare(a.t, b.t) })
	byStart := func(a, b Commitment) int { return cmp.Compare(a.Start, b.Start) }
	if !slices.IsSortedFunc(cal.commits, byStart) {
		slices.SortStableFunc(cal.commits, byStart)
	}
	cal.at = append(make([]int64, 0, len(evs)+1), beginning)
	capNow, used := c.Total, 0
	// Reductions from the beginning of time apply to the first step.
	i := 0
	for i < len(evs) && evs[i].t == beginning {
		capNow += evs[i].dcap
		used += evs[i].dused
		i++
	}
	cal.cap = append(make([]int, 0, len(evs)+1), capNow)
	cal.used = append(make([]int, 0, len(evs)+1), used)
	for i < len(evs) {
		t := evs[i].t
		for i < len(evs) && evs[i].t == t {
			capNow += evs[i].dcap
			used += evs[i].dused
			i++
		}
		k := len(cal.at) - 1
		if cal.cap[k] == capNow && cal.used[k] == used {
			continue
		}
		cal.at = append(cal.at, t)
		cal.cap = append(cal.cap, capNow)
		cal.used = append(cal.used, used)
	}
	return cal
}

// capAt clamps capacity at zero: reductions can exceed the total.
func (c *Calendar) capOf(i int) int { return max(c.cap[i], 0) }

// index returns the step holding instant t.
func (c *Calendar) index(t int64) int {
	return sort.Search(len(c.at), func(i int) bool { return c.at[i] > t }) - 1
}

// At returns the capacity and the committed count at t.
func (c *Calendar) At(t time.Time) (capacity, committed int) {
	i := c.index(t.Unix())
	return c.capOf(i), c.used[i]
}

// Segment is a stretch of time over which capacity and commitment are
// constant. A zero From is the beginning of time, a zero To forever.
type Segment struct {
	From      time.Time `json:"from,omitzero"`
	To        time.Time `json:"to,omitzero"`
	Capacity  int       `json:"capacity"`
	Committed int       `json:"committed"`
}

// Free is what is left to book in the segment (negative when overbooked).
func (s Segment) Free() int { return s.Capacity - s.Committed }

// Segments returns the steps of the calendar clipped to [from, to).
func (c *Calendar) Segments(from, to time.Time) []Segment {
	f, t := from.Unix(), to.Unix()
	var out []Segment
	c.each(f, t, func(a, z int64, i int) bool {
		out = append(out, Segment{From: fromUnix(a), To: fromUnix(z), Capacity: c.capOf(i), Committed: c.used[i]})
		return true
	})
	return out
}

// each calls fn for each step overlapping [f, t), clipped to it.
func (c *Calendar) each(f, t int64, fn func(a, z int64, i int) bool) {
	if t <= f {
		return
	}
	for i := c.index(f); i < len(c.at); i++ {
		a := max(c.at[i], f)
		if a >= t {
			return
		}
		z := forever
		if i+1 < len(c.at) {
			z = c.at[i+1]
		}
		z = min(z, t)
		if !fn(a, z, i) {
			return
		}
	}
}

// MinFree is the least free capacity over [from, to).
func (c *Calendar) MinFree(from, to time.Time) int {
	m := math.MaxInt
	c.each(from.Unix(), to.Unix(), func(_, _ int64, i int) bool {
		m = min(m, c.capOf(i)-c.used[i])
		return true
	})
	return m
}

// Overlapping returns the commitments that overlap [f, t).
func (c *Calendar) Overlapping(f, t int64) []Commitment {
	var out []Commitment
	// commits are sorted by Start; none starting at or after t overlaps.
	n := sort.Search(len(c.commits), func(i int) bool { return c.commits[i].Start >= t })
	for _, m := range c.commits[:n] {
		if m.End > f {
			out = append(out, m)
		}
	}
	return out
}

// goodRuns returns the maximal runs within [from, until) where at least
// need is free; a run reaching until is open-ended (End == forever) when
// the calendar is free from there on. The steps come in order and a run
// grows while they are free, so the runs are a Set as it stands.
func (c *Calendar) goodRuns(from, until int64, need int) interval.Set {
	var out interval.Set
	c.each(from, forever, func(a, z int64, i int) bool {
		if a >= until {
			return false
		}
		if c.capOf(i)-c.used[i] < need {
			return true
		}
		if k := len(out) - 1; k >= 0 && out[k].End == a {
			out[k].End = z
		} else {
			out = append(out, interval.Interval{Start: a, End: z})
		}
		return true
	})
	return out
}

// Slot is a window that fits: any start from Start to Latest (inclusive)
// gives a window of the asked length that fits; a zero Latest means any
// later start fits too, up to the end of the search.
type Slot struct {
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"` // Start + the asked length
	Latest time.Time `json:"latestStart,omitzero"`
}

// Need is an amount of one resource's calendar.
type Need struct {
	Calendar *Calendar
	Count    int
}

// FindSlots returns up to limit of the earliest windows of length d that
// start at or after after, no later than lastStart (zero: no bound), where
// every need fits at every instant. Each slot is a maximal range of
// starts; the next slot begins after a stretch where no start fits.
func FindSlots(needs []Need, after time.Time, d time.Duration, lastStart time.Time, limit int) []Slot {
	if len(needs) == 0 || d <= 0 || limit <= 0 {
		return nil
	}
	from, length := after.Unix(), int64(d/time.Second)
	until := forever
	if !lastStart.IsZero() {
		until = lastStart.Unix() + length
	}
	// Intersect the runs where each need fits.
	var runs interval.Set
	for i, n := range needs {
		r := n.Calendar.goodRuns(from, until, n.Count)
		if i == 0 {
			runs = r
			continue
		}
		runs = runs.Meet(r)
	}
	var out []Slot
	for _, r := range runs {
		if r.End != forever && r.Len() < length {
			continue
		}
		s := Slot{Start: fromUnix(r.Start), End: fromUnix(r.Start + length)}
		if until != forever && r.Start > until-length {
			break
		}
		// A run that reaches the end of the search stays open: any later
		// start within the search fits.
		if r.End != forever && (until == forever || r.End < until) {
			s.Latest = fromUnix(r.End - length)
		}
		out = append(out, s)
		if len(out) == limit {
			break
		}
	}
	return out
}

// Bucket is one step of an availability timeline: over [From, To), the
// least capacity, the most committed and the least free.
type Bucket struct {
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
	Capacity  int       `json:"capacity"`
	Committed int       `json:"committed"`
	Free      int       `json:"free"`
}

// Timeline returns the buckets of length step from from up to to (the last
// one cut at to), in O(buckets + steps).
func (c *Calendar) Timeline(from, to time.Time, step time.Duration) []Bucket {
	if step <= 0 || !to.After(from) {
		return nil
	}
	f, t, st := from.Unix(), to.Unix(), int64(step/time.Second)
	out := make([]Bucket, 0, (t-f+st-1)/st)
	i := c.index(f)
	for a := f; a < t; a += st {
		z := min(a+st, t)
		b := Bucket{From: fromUnix(a), To: fromUnix(z), Capacity: math.MaxInt, Free: math.MaxInt}
		// Steps overlapping [a, z): from i (holding a) on.
		for j := i; j < len(c.at) && c.at[j] < z; j++ {
			b.Capacity = min(b.Capacity, c.capOf(j))
			b.Committed = max(b.Committed, c.used[j])
			b.Free = min(b.Free, c.capOf(j)-c.used[j])
		}
		out = append(out, b)
		// The step holding z is where the next bucket starts.
		for i+1 < len(c.at) && c.at[i+1] <= z {
			i++
		}
	}
	return out
}
