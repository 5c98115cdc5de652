package view

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

func TestPolicyRows(t *testing.T) {
	day := reserve.Span(24 * time.Hour)
	cases := map[string]struct {
		p    reserve.Policy
		want []string // the values, in row order
	}{
		"the default over a quota": {
			p:    reserve.Policy{MaxGPUs: map[string]int{"h100": 1, "1g.10gb": 2}, MaxGPUsFromQuota: true, MaxWindow: 14 * day, MaxHorizon: 90 * day},
			want: []string{"1g.10gb=2,h100=1", "14d", "0s", "90d", "none"},
		},
		"no limits": {p: reserve.Policy{}, want: []string{"no limit (the pool)", "no limit", "0s", "no limit", "none"}},
	}
	for name, c := range cases {
		var got []string
		for _, r := range PolicyRows(c.p) {
			got = append(got, r.Value)
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%s (-want +got)\n%s", name, d)
		}
	}
	if m := PolicyRows(cases["the default over a quota"].p)[0].Meaning; m != "GPUs of a type booked at once (the tenant's quota: its policy sets none)" {
		t.Errorf("maxGPUs meaning %q", m)
	}
}
