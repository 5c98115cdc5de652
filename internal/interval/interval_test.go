package interval

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIntervalPredicates(t *testing.T) {
	cases := map[string]struct {
		i, o             Interval
		empty            bool
		len              int64
		overlaps, covers bool
		intersect        Interval
	}{
		"disjoint":         {i: Interval{0, 10}, o: Interval{20, 30}, len: 10, intersect: Interval{}},
		"touching":         {i: Interval{0, 10}, o: Interval{10, 20}, len: 10, intersect: Interval{}},
		"overlapping":      {i: Interval{0, 10}, o: Interval{5, 15}, len: 10, overlaps: true, intersect: Interval{5, 10}},
		"inside":           {i: Interval{0, 10}, o: Interval{2, 8}, len: 10, overlaps: true, covers: true, intersect: Interval{2, 8}},
		"around":           {i: Interval{2, 8}, o: Interval{0, 10}, len: 6, overlaps: true, intersect: Interval{2, 8}},
		"equal":            {i: Interval{3, 4}, o: Interval{3, 4}, len: 1, overlaps: true, covers: true, intersect: Interval{3, 4}},
		"other empty":      {i: Interval{0, 10}, o: Interval{5, 5}, len: 10, covers: true, intersect: Interval{}},
		"empty":            {i: Interval{5, 5}, o: Interval{0, 10}, empty: true, intersect: Interval{}},
		"reversed":         {i: Interval{9, 1}, o: Interval{0, 10}, empty: true, intersect: Interval{}},
		"negative seconds": {i: Interval{-10, -2}, o: Interval{-5, 0}, len: 8, overlaps: true, intersect: Interval{-5, -2}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := struct {
				Empty, Overlaps, Covers bool
				Len                     int64
				Intersect               Interval
			}{tc.i.Empty(), tc.i.Overlaps(tc.o), tc.i.Covers(tc.o), tc.i.Len(), tc.i.Intersect(tc.o)}
			want := struct {
				Empty, Overlaps, Covers bool
				Len                     int64
				Intersect               Interval
			}{tc.empty, tc.overlaps, tc.covers, tc.len, tc.intersect}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%v against %v (-want +got):\n%s", tc.i, tc.o, d)
			}
			if tc.i.Overlaps(tc.o) != tc.o.Overlaps(tc.i) {
				t.Errorf("Overlaps is not symmetric for %v and %v", tc.i, tc.o)
			}
		})
	}
}

func TestIntervalContainsAndClip(t *testing.T) {
	iv := Interval{10, 20}
	cases := map[string]struct {
		t        int64
		contains bool
		clip     int64
	}{
		"before":     {t: 5, clip: 10},
		"at start":   {t: 10, contains: true, clip: 10},
		"inside":     {t: 15, contains: true, clip: 15},
		"last":       {t: 19, contains: true, clip: 19},
		"at end":     {t: 20, clip: 20},
		"after":      {t: 99, clip: 20},
		"far before": {t: -1 << 62, clip: 10},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := [2]any{iv.Contains(tc.t), iv.Clip(tc.t)}
			if d := cmp.Diff([2]any{tc.contains, tc.clip}, got); d != "" {
				t.Errorf("%v at %d: (-want +got):\n%s", iv, tc.t, d)
			}
		})
	}
}

func TestIntervalString(t *testing.T) {
	if got := (Interval{1, 5}).String(); got != "[1, 5)" {
		t.Errorf("String = %q, want [1, 5)", got)
	}
}
