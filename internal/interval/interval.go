package interval

import "fmt"

// Interval is the half-open range of Unix seconds [Start, End): it holds
// Start and not End. An interval whose End is not after its Start is
// empty.
type Interval struct {
	Start, End int64
}

// Empty reports whether i holds no second.
func (i Interval) Empty() bool { return i.End <= i.Start }

// Len is the number of seconds i holds (0 when empty).
func (i Interval) Len() int64 {
	if i.Empty() {
		return 0
	}
	return i.End - i.Start
}

// Contains reports whether the second t lies in i.
func (i Interval) Contains(t int64) bool { return i.Start <= t && t < i.End }

// Covers reports whether every second of o lies in i (true when o is empty).
func (i Interval) Covers(o Interval) bool {
	return o.Empty() || (i.Start <= o.Start && o.End <= i.End)
}

// Overlaps reports whether i and o share at least one second; intervals
// that only touch ([1, 2) and [2, 3)) do not.
func (i Interval) Overlaps(o Interval) bool {
	return !i.Empty() && !o.Empty() && i.Start < o.End && o.Start < i.End
}

// Intersect returns the seconds that i and o share: the zero Interval when
// they share none.
func (i Interval) Intersect(o Interval) Interval {
	r := Interval{max(i.Start, o.Start), min(i.End, o.End)}
	if r.Empty() {
		return Interval{}
	}
	return r
}

// Clip returns the second t moved into i's bounds [Start, End]: Start when
// t is before i, End when t is after. It is the bound a window puts on a
// time that may lie outside it.
func (i Interval) Clip(t int64) int64 { return min(max(t, i.Start), i.End) }

// String writes i as "[Start, End)".
func (i Interval) String() string { return fmt.Sprintf("[%d, %d)", i.Start, i.End) }
