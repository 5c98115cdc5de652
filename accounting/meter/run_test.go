package meter

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var rules = TierRules{OnDemandPartition: "ondemand", OnDemandQOS: "ondemand"}

func ts(s string) int64 {
	t, err := time.Parse(time.DateTime, s)
	if err != nil {
		panic(err)
	}
	return t.Unix()
}

func per(s string) Period {
	p, err := ParsePeriod(s)
	if err != nil {
		panic(err)
	}
	return p
}

func TestSplit(t *testing.T) {
	key := RunKey{"c", 42, ts("2026-10-01 00:00:00")}
	h100 := []Alloc{{"h100", 2}}
	run := func(start, end string, gpus []Alloc) Run {
		r := Run{Key: key, Account: "acme", Partition: "pool", QOS: "acme", GPUs: gpus}
		if start != "" {
			r.Start = ts(start)
		}
		if end != "" {
			r.End = ts(end)
		}
		return r
	}
	u := func(p string, typ string, count int64, s, e string, final bool) Usage {
		return Usage{Run: key, Period: per(p), Tier: Reserved, Type: typ, Count: count,
			Start: ts(s), End: ts(e), GPUSeconds: count * (ts(e) - ts(s)), Final: final}
	}
	asOf := ts("2026-12-15 12:00:00")
	cases := map[string]struct {
		run  Run
		asOf int64
		want []Usage
	}{
		"inside one month": {run("2026-11-03 10:00:00", "2026-11-03 11:00:00", h100), asOf,
			[]Usage{u("2026-11", "h100", 2, "2026-11-03 10:00:00", "2026-11-03 11:00:00", true)}},
		"spans a month boundary, split at 00:00:00 UTC": {run("2026-10-31 23:00:00", "2026-11-01 01:30:00", h100), asOf,
			[]Usage{
				u("2026-10", "h100", 2, "2026-10-31 23:00:00", "2026-11-01 00:00:00", true),
				u("2026-11", "h100", 2, "2026-11-01 00:00:00", "2026-11-01 01:30:00", true),
			}},
		"ends exactly on the boundary: nothing in the next month": {run("2026-10-31 23:00:00", "2026-11-01 00:00:00", h100), asOf,
			[]Usage{u("2026-10", "h100", 2, "2026-10-31 23:00:00", "2026-11-01 00:00:00", true)}},
		"starts exactly on the boundary": {run("2026-11-01 00:00:00", "2026-11-01 00:00:01", h100), asOf,
			[]Usage{u("2026-11", "h100", 2, "2026-11-01 00:00:00", "2026-11-01 00:00:01", true)}},
		"three months and a year boundary": {run("2026-11-30 12:00:00", "2027-01-01 06:00:00", h100), ts("2027-02-01 00:00:00"),
			[]Usage{
				u("2026-11", "h100", 2, "2026-11-30 12:00:00", "2026-12-01 00:00:00", true),
				u("2026-12", "h100", 2, "2026-12-01 00:00:00", "2027-01-01 00:00:00", true),
				u("2027-01", "h100", 2, "2027-01-01 00:00:00", "2027-01-01 06:00:00", true),
			}},
		"running: earlier month final, current month accrued to as-of": {run("2026-11-20 00:00:00", "", h100), asOf,
			[]Usage{
				u("2026-11", "h100", 2, "2026-11-20 00:00:00", "2026-12-01 00:00:00", true),
				u("2026-12", "h100", 2, "2026-12-01 00:00:00", "2026-12-15 12:00:00", false),
			}},
		"running, as-of exactly a period end: that period is final": {run("2026-11-20 00:00:00", "", h100), ts("2026-12-01 00:00:00"),
			[]Usage{u("2026-11", "h100", 2, "2026-11-20 00:00:00", "2026-12-01 00:00:00", true)}},
		"running, started after as-of":          {run("2026-12-20 00:00:00", "", h100), asOf, nil},
		"cancelled while pending (no start)":    {run("", "2026-11-03 11:00:00", h100), asOf, nil},
		"cancelled while pending (start = end)": {run("2026-11-03 11:00:00", "2026-11-03 11:00:00", h100), asOf, nil},
		"pending (no start, no end)":            {run("", "", h100), asOf, nil},
		"no GPUs":                               {run("2026-11-03 10:00:00", "2026-11-03 11:00:00", nil), asOf, nil},
		"zero-count GPUs dropped":               {run("2026-11-03 10:00:00", "2026-11-03 11:00:00", []Alloc{{"h100", 0}}), asOf, nil},
		"full GPU and a MIG slice, sorted by type": {run("2026-11-03 10:00:00", "2026-11-03 10:00:10", []Alloc{{"h100", 1}, {"1g.10gb", 1}}), asOf,
			[]Usage{
				u("2026-11", "1g.10gb", 1, "2026-11-03 10:00:00", "2026-11-03 10:00:10", true),
				u("2026-11", "h100", 1, "2026-11-03 10:00:00", "2026-11-03 10:00:10", true),
			}},
		"same type twice is merged": {run("2026-11-03 10:00:00", "2026-11-03 10:00:10", []Alloc{{"h100", 1}, {"h100", 3}}), asOf,
			[]Usage{u("2026-11", "h100", 4, "2026-11-03 10:00:00", "2026-11-03 10:00:10", true)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Split(tc.run, tc.asOf, rules)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestSplitTier(t *testing.T) {
	r := Run{Key: RunKey{"c", 1, 1}, Partition: "ondemand", QOS: "ondemand", Start: ts("2026-11-01 00:00:00"), End: ts("2026-11-01 00:01:00"), GPUs: []Alloc{{"h100", 1}}}
	got := Split(r, r.End, rules)
	if len(got) != 1 || got[0].Tier != OnDemand {
		t.Fatalf("got %+v, want one ondemand usage", got)
	}
}

// TestSplitInvariants checks Split against an independent recomputation on
// random runs: the usages tile [start, min(end, asOf)) without gaps or
// overlaps, each lies inside its period, the GPU-seconds sum to count ×
// duration, and only the part of a running run in the as-of period is an
// accrual.
func TestSplitInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	base := ts("2026-01-01 00:00:00")
	year := int64(365 * 86400)
	for i := range 20000 {
		start := base + rng.Int64N(year)
		var end int64
		if rng.IntN(4) > 0 {
			end = start + rng.Int64N(90*86400)
		}
		asOf := start + rng.Int64N(120*86400)
		if end != 0 && asOf < end {
			asOf = end + rng.Int64N(86400)
		}
		gpus := []Alloc{{"h100", 1 + rng.Int64N(8)}}
		if rng.IntN(3) == 0 {
			gpus = append(gpus, Alloc{"3g.40gb", 1 + rng.Int64N(2)})
		}
		r := Run{Key: RunKey{"c", uint32(i), start - 10}, Start: start, End: end, GPUs: gpus}
		us := Split(r, asOf, rules)

		stop := end
		if end == 0 {
			stop = asOf
		}
		// Independent recomputation: per type, total = count × duration.
		want := map[string]int64{}
		for _, g := range gpus {
			want[g.Type] += g.Count * max(0, stop-start)
		}
		got := map[string]int64{}
		next := map[string]int64{}
		for _, u := range us {
			got[u.Type] += u.GPUSeconds
			if !u.Period.Contains(u.Start) || u.End > u.Period.EndUnix() || u.End <= u.Start {
				t.Fatalf("run %d: usage %+v outside its period", i, u)
			}
			if n, ok := next[u.Type]; ok && n != u.Start {
				t.Fatalf("run %d: gap or overlap at %d (%+v)", i, n, u)
			}
			next[u.Type] = u.End
			wantFinal := end != 0 || u.Period.EndUnix() <= asOf
			if u.Final != wantFinal {
				t.Fatalf("run %d: usage %+v Final=%v, want %v", i, u, u.Final, wantFinal)
			}
		}
		if stop > start {
			for typ, n := range next {
				if n != stop {
					t.Fatalf("run %d: %s ends at %d, want %d", i, typ, n, stop)
				}
			}
		}
		if d := cmp.Diff(want, got); stop > start && d != "" {
			t.Fatalf("run %d: GPU-seconds (-want +got)\n%s", i, d)
		}
	}
}

func TestLineKind(t *testing.T) {
	u := Usage{Period: per("2026-10"), Final: true}
	cases := map[string]struct {
		line Line
		want Kind
	}{
		"booked in its own period": {Line{Usage: u, Booked: per("2026-10")}, KindUsage},
		"booked in a later period": {Line{Usage: u, Booked: per("2026-11")}, KindAdjustment},
		"accrual of a running run": {Line{Usage: Usage{Period: per("2026-10")}, Booked: per("2026-10")}, KindAccrual},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.line.Kind(); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestCrossedPeriodEnd(t *testing.T) {
	asOf := ts("2026-12-15 00:00:00")
	cases := map[string]struct {
		start, end string
		want       bool
	}{
		"inside one month":                {"2026-11-02 00:00:00", "2026-11-03 00:00:00", false},
		"across a month end before as-of": {"2026-11-30 23:00:00", "2026-12-01 01:00:00", true},
		"ends exactly at the month end":   {"2026-11-30 23:00:00", "2026-12-01 00:00:00", false},
		"running across a month end":      {"2026-11-30 23:00:00", "", true},
		"running inside the as-of month":  {"2026-12-10 00:00:00", "", false},
		"month end after as-of":           {"2026-12-31 23:00:00", "2027-01-01 01:00:00", false},
		"never started":                   {"", "2026-12-01 01:00:00", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := Run{}
			if tc.start != "" {
				r.Start = ts(tc.start)
			}
			if tc.end != "" {
				r.End = ts(tc.end)
			}
			if got := r.CrossedPeriodEnd(asOf); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
