package ledger

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

func TestCoverage(t *testing.T) {
	cases := map[string]struct {
		adds [][2]int64
		want coverage
	}{
		"empty add ignored":   {[][2]int64{{5, 5}}, nil},
		"one":                 {[][2]int64{{1, 5}}, coverage{{1, 5}}},
		"touching merge":      {[][2]int64{{1, 5}, {5, 9}}, coverage{{1, 9}}},
		"overlap merge":       {[][2]int64{{1, 5}, {3, 9}}, coverage{{1, 9}}},
		"disjoint sorted":     {[][2]int64{{10, 20}, {1, 5}}, coverage{{1, 5}, {10, 20}}},
		"bridge two":          {[][2]int64{{1, 5}, {10, 20}, {4, 11}}, coverage{{1, 20}}},
		"inside":              {[][2]int64{{1, 20}, {4, 11}}, coverage{{1, 20}}},
		"three, middle added": {[][2]int64{{1, 2}, {10, 20}, {30, 40}, {5, 6}}, coverage{{1, 2}, {5, 6}, {10, 20}, {30, 40}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var c coverage
			for _, a := range tc.adds {
				c = c.add(a[0], a[1])
			}
			if d := cmp.Diff(tc.want, c); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
	c := coverage{{1, 5}, {10, 20}}
	for tm, want := range map[int64]bool{0: false, 1: true, 4: true, 5: false, 9: false, 10: true, 19: true, 20: false, 99: false} {
		if got := c.contains(tm); got != want {
			t.Errorf("contains(%d) = %v, want %v", tm, got, want)
		}
	}
}

func TestNeedsLookup(t *testing.T) {
	nov1 := meter.Period(2026*12 + 10).StartUnix()
	dec1 := meter.Period(2026*12 + 11).StartUnix()
	cov := coverage{{nov1, nov1 + 86400}}
	fresh := coverage{{nov1 + 86400, dec1 + 86400}}
	cases := map[string]struct {
		run   meter.Run
		asOf  int64
		fresh coverage
		want  bool
	}{
		"ends in coverage":                          {meter.Run{Start: nov1 + 10, End: nov1 + 100}, dec1, nil, true},
		"new, inside one month":                     {meter.Run{Start: nov1 + 2*86400, End: nov1 + 3*86400}, dec1 + 5, nil, false},
		"crossed a period end that passed":          {meter.Run{Start: dec1 - 10, End: dec1 + 10}, dec1 + 5, nil, true},
		"crosses a period end after as-of":          {meter.Run{Start: dec1 - 10, End: dec1 + 10}, dec1 - 5, nil, false},
		"ends exactly at the period end: no lookup": {meter.Run{Start: dec1 - 10, End: dec1}, dec1 + 5, nil, false},
		"running":                                    {meter.Run{Start: dec1 - 10}, dec1 + 5, nil, true},
		"fresh: inside, no lookup":                   {meter.Run{Start: nov1 + 2*86400, End: nov1 + 3*86400}, dec1 + 5, fresh, false},
		"fresh: outside it, a lookup":                {meter.Run{Start: nov1 + 2*86400, End: dec1 + 2*86400}, dec1 + 5, fresh, true},
		"fresh: inside but crossed a period end":     {meter.Run{Start: dec1 - 10, End: dec1 + 10}, dec1 + 5, fresh, true},
		"fresh wins over the coverage (this ingest)": {meter.Run{Start: nov1 + 10, End: nov1 + 86400 + 5}, dec1, fresh, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := needsLookup(tc.run, cov, tc.fresh, tc.asOf); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCoverageCovers(t *testing.T) {
	c := coverage{{10, 20}, {30, 40}}
	cases := map[[2]int64]bool{{10, 20}: true, {12, 18}: true, {10, 21}: false, {15, 35}: false, {30, 40}: true, {5, 5}: true, {0, 10}: false}
	for r, want := range cases {
		if got := c.covers(r[0], r[1]); got != want {
			t.Errorf("covers(%v) = %v, want %v", r, got, want)
		}
	}
}
