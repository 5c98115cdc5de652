package reservetest

import (
	"math"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// Naive answers calendar queries by scanning every commitment and every
// reduction for each instant it looks at.
type Naive struct {
	Capacity reserve.Capacity
	Commits  []reserve.Commitment
}

func (n Naive) capAt(t int64) int {
	c := n.Capacity.Total
	for _, r := range n.Capacity.Reductions {
		s, e := int64(math.MinInt64), int64(math.MaxInt64)
		if !r.Start.IsZero() {
			s = r.Start.Unix()
		}
		if !r.End.IsZero() {
			e = r.End.Unix()
		}
		if s <= t && t < e {
			c -= r.Count
		}
	}
	return max(c, 0)
}

func (n Naive) usedAt(t int64) int {
	u := 0
	for _, m := range n.Commits {
		if m.Resource == n.Capacity.Resource && m.Start <= t && t < m.End {
			u += m.Count
		}
	}
	return u
}

// At is the capacity and the committed count at t.
func (n Naive) At(t time.Time) (int, int) { return n.capAt(t.Unix()), n.usedAt(t.Unix()) }

// instants returns the times in [f, t) at which capacity or commitment can
// change, plus f: the only instants a scan must look at.
func (n Naive) instants(f, t int64) []int64 {
	out := []int64{f}
	add := func(v int64) {
		if v > f && v < t {
			out = append(out, v)
		}
	}
	for _, m := range n.Commits {
		if m.Resource == n.Capacity.Resource {
			add(m.Start)
			add(m.End)
		}
	}
	for _, r := range n.Capacity.Reductions {
		if !r.Start.IsZero() {
			add(r.Start.Unix())
		}
		if !r.End.IsZero() {
			add(r.End.Unix())
		}
	}
	return out
}

// MinFree is the least free capacity over [from, to).
func (n Naive) MinFree(from, to time.Time) int {
	m := math.MaxInt
	for _, t := range n.instants(from.Unix(), to.Unix()) {
		m = min(m, n.capAt(t)-n.usedAt(t))
	}
	return m
}

// Timeline is reserve.Calendar.Timeline by scanning.
func (n Naive) Timeline(from, to time.Time, step time.Duration) []reserve.Bucket {
	var out []reserve.Bucket
	st := int64(step / time.Second)
	for a := from.Unix(); a < to.Unix(); a += st {
		z := min(a+st, to.Unix())
		b := reserve.Bucket{From: time.Unix(a, 0).UTC(), To: time.Unix(z, 0).UTC(), Capacity: math.MaxInt, Free: math.MaxInt}
		for _, t := range n.instants(a, z) {
			c, u := n.capAt(t), n.usedAt(t)
			b.Capacity = min(b.Capacity, c)
			b.Committed = max(b.Committed, u)
			b.Free = min(b.Free, c-u)
		}
		out = append(out, b)
	}
	return out
}

// Earliest is the earliest start at or after after, on a grid of candidate
// starts (after and every instant capacity or commitment changes), from
// which count fits for d; ok is false when none starts before lastStart.
func (n Naive) Earliest(count int, after time.Time, d time.Duration, lastStart time.Time) (time.Time, bool) {
	limit := lastStart.Unix()
	cands := n.instants(after.Unix(), math.MaxInt64)
	best := int64(math.MaxInt64)
	for _, s := range cands {
		if s > limit || s >= best {
			continue
		}
		if n.MinFree(time.Unix(s, 0), time.Unix(s, 0).Add(d)) >= count {
			best = s
		}
	}
	if best == math.MaxInt64 {
		return time.Time{}, false
	}
	return time.Unix(best, 0).UTC(), true
}
