package ledger

import (
	"testing"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/interval"
)

func TestNeedsLookup(t *testing.T) {
	nov1 := meter.Period(2026*12 + 10).StartUnix()
	dec1 := meter.Period(2026*12 + 11).StartUnix()
	cov := interval.Set{{Start: nov1, End: nov1 + 86400}}
	fresh := interval.Set{{Start: nov1 + 86400, End: dec1 + 86400}}
	cases := map[string]struct {
		run   meter.Run
		asOf  int64
		fresh interval.Set
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
