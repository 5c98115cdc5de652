package meter

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPeriod(t *testing.T) {
	cases := map[string]struct {
		in         string
		wantStart  time.Time
		wantEnd    time.Time
		wantString string
	}{
		"november":  {"2026-11", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), "2026-11"},
		"december":  {"2026-12", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), "2026-12"},
		"january":   {"2027-01", time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC), "2027-01"},
		"leap feb":  {"2028-02", time.Date(2028, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2028, 3, 1, 0, 0, 0, 0, time.UTC), "2028-02"},
		"year 1970": {"1970-01", time.Unix(0, 0).UTC(), time.Date(1970, 2, 1, 0, 0, 0, 0, time.UTC), "1970-01"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := ParsePeriod(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			got := []any{p.Start(), p.End(), p.String(), p.EndUnix() - p.StartUnix()}
			want := []any{tc.wantStart, tc.wantEnd, tc.wantString, int64(tc.wantEnd.Sub(tc.wantStart) / time.Second)}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
			if PeriodOf(tc.wantStart) != p || PeriodOf(tc.wantEnd.Add(-time.Second)) != p || PeriodOf(tc.wantEnd) != p.Next() {
				t.Errorf("PeriodOf boundaries wrong for %s", p)
			}
			var q Period
			if err := q.UnmarshalText([]byte(tc.in)); err != nil || q != p {
				t.Errorf("UnmarshalText(%q) = %v, %v", tc.in, q, err)
			}
		})
	}
}

func TestParsePeriodErrors(t *testing.T) {
	for _, s := range []string{"", "2026", "2026-13", "2026-1", "26-11", "2026-11-01", "november"} {
		if _, err := ParsePeriod(s); err == nil {
			t.Errorf("ParsePeriod(%q): want an error", s)
		}
	}
}

func TestPeriodOfUsesUTC(t *testing.T) {
	// 2026-12-01 00:30 in UTC+1 is still November in UTC.
	loc := time.FixedZone("CET", 3600)
	got := PeriodOf(time.Date(2026, 12, 1, 0, 30, 0, 0, loc))
	if got.String() != "2026-11" {
		t.Errorf("got %s, want 2026-11", got)
	}
}

func TestTierRules(t *testing.T) {
	r := TierRules{OnDemandPartition: "ondemand", OnDemandQOS: "ondemand"}
	cases := map[string]struct {
		rules          TierRules
		partition, qos string
		want           Tier
	}{
		"pool, tenant qos":           {r, "pool", "acme", Reserved},
		"ondemand partition":         {r, "ondemand", "acme", OnDemand},
		"ondemand qos":               {r, "pool", "ondemand", OnDemand},
		"both":                       {r, "ondemand", "ondemand", OnDemand},
		"empty rules never match":    {TierRules{}, "", "", Reserved},
		"case matters (Slurm too)":   {r, "OnDemand", "ONDEMAND", Reserved},
		"other qos, other partition": {TierRules{OnDemandPartition: "burst", OnDemandQOS: "spot"}, "ondemand", "ondemand", Reserved},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.rules.Tier(tc.partition, tc.qos); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
	if _, err := ParseTier("burst"); err == nil {
		t.Error("ParseTier(burst): want an error")
	}
}
