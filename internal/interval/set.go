package interval

import (
	"slices"
	"sort"
	"strings"
)

// Set is a set of seconds written as a sorted list of disjoint, non-empty
// intervals, no two of which touch. The zero Set is empty. Build one with
// [Of] (or [Set.Add]); a Set written by hand must keep that order.
type Set []Interval

// Of returns the set of the seconds that the intervals hold, in any order,
// overlapping or empty.
func Of(ivs ...Interval) Set {
	var s Set
	for _, iv := range ivs {
		s = s.Add(iv)
	}
	return s
}

// Add returns s with the seconds of iv added: the members that overlap or
// touch iv are merged with it. s is left as it was.
func (s Set) Add(iv Interval) Set {
	if iv.Empty() {
		return slices.Clone(s)
	}
	// lo is the first member that ends at or after iv's start (it may merge),
	// hi the first that starts after iv's end (it may not).
	lo := sort.Search(len(s), func(k int) bool { return s[k].End >= iv.Start })
	hi := sort.Search(len(s), func(k int) bool { return s[k].Start > iv.End })
	if lo < hi {
		iv = Interval{min(iv.Start, s[lo].Start), max(iv.End, s[hi-1].End)}
	}
	out := make(Set, 0, len(s)-(hi-lo)+1)
	out = append(out, s[:lo]...)
	out = append(out, iv)
	return append(out, s[hi:]...)
}

// Union returns the seconds in s or in o.
func (s Set) Union(o Set) Set {
	out := slices.Clone(s)
	for _, iv := range o {
		out = out.Add(iv)
	}
	return out
}

// Subtract returns the seconds of s that are not in o.
func (s Set) Subtract(o Set) Set {
	var out Set
	for _, iv := range s {
		out = append(out, subtractFrom(iv, o)...)
	}
	return out
}

// subtractFrom returns the parts of iv that the members of o leave out, in
// order.
func subtractFrom(iv Interval, o Set) Set {
	var out Set
	for _, m := range o {
		if m.End <= iv.Start || m.Start >= iv.End {
			continue
		}
		if m.Start > iv.Start {
			out = append(out, Interval{iv.Start, m.Start})
		}
		iv.Start = max(iv.Start, m.End)
	}
	if !iv.Empty() {
		out = append(out, iv)
	}
	return out
}

// Intersect returns the seconds of s that lie in the window w.
func (s Set) Intersect(w Interval) Set {
	var out Set
	for _, iv := range s {
		if r := iv.Intersect(w); !r.Empty() {
			out = append(out, r)
		}
	}
	return out
}

// Meet returns the seconds in both s and o, in one pass over both.
func (s Set) Meet(o Set) Set {
	var out Set
	i, j := 0, 0
	for i < len(s) && j < len(o) {
		if r := s[i].Intersect(o[j]); !r.Empty() {
			out = append(out, r)
		}
		if s[i].End < o[j].End {
			i++
		} else {
			j++
		}
	}
	return out
}

// Contains reports whether the second t is in s.
func (s Set) Contains(t int64) bool {
	i := s.first(t)
	return i < len(s) && s[i].Contains(t)
}

// Covers reports whether every second of iv is in s (true when iv is
// empty). The members never touch, so one member must hold all of iv.
func (s Set) Covers(iv Interval) bool {
	if iv.Empty() {
		return true
	}
	i := s.first(iv.Start)
	return i < len(s) && s[i].Covers(iv)
}

// first returns the index of the first member that ends after t: the one
// that holds t, if any does.
func (s Set) first(t int64) int {
	return sort.Search(len(s), func(k int) bool { return s[k].End > t })
}

// Len is the number of seconds in s.
func (s Set) Len() int64 {
	var n int64
	for _, iv := range s {
		n += iv.Len()
	}
	return n
}

// String writes s as its members, "[1, 2) [5, 9)", or "{}" when empty.
func (s Set) String() string {
	if len(s) == 0 {
		return "{}"
	}
	parts := make([]string, len(s))
	for i, iv := range s {
		parts[i] = iv.String()
	}
	return strings.Join(parts, " ")
}
