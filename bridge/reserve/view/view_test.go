package view

import (
	"testing"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

func TestBar(t *testing.T) {
	cases := map[string]struct {
		pool, cap, used int
		want            string
	}{
		"free":        {4, 4, 0, "...."},
		"half":        {4, 4, 2, "##.."},
		"down":        {4, 2, 1, "#.xx"},
		"overbooked":  {4, 2, 4, "##!!"},
		"scaled":      {40, 40, 20, "##########.........."},
		"zero pool":   {0, 0, 0, ""},
		"scaled down": {100, 50, 0, "..........xxxxxxxxxx"},
	}
	for name, c := range cases {
		b := Bar(c.pool, bucket(c.cap, c.used))
		if b != c.want {
			t.Errorf("%s: bar = %q; want %q", name, b, c.want)
		}
	}
}

func bucket(capacity, used int) reserve.Bucket {
	return reserve.Bucket{Capacity: capacity, Committed: used, Free: capacity - used}
}

func TestBookingAuditSummary(t *testing.T) {
	s := func(v string) *string { return &v }
	created := s(`{"id":4,"tenant":"acme","kind":"gpu","gpuType":"h100","count":2,"start":"2026-12-01T09:00:00Z","end":"2026-12-01T10:00:00Z","purpose":"p","state":"requested"}`)
	projected := s(`{"id":4,"tenant":"acme","kind":"gpu","gpuType":"h100","count":2,"start":"2026-12-01T09:00:00Z","end":"2026-12-01T10:00:00Z","purpose":"p","state":"scheduled","held":{"reservation":"gpubridge-4","start":"2026-12-01T09:00:00Z","end":"2026-12-01T10:00:00Z","count":2}}`)
	cases := map[string]struct {
		summary       func(before, after *string) string
		before, after *string
		want          string
	}{
		"create":  {BookingAudit, nil, created, `acme h100:2 2026-12-01T09:00:00Z..2026-12-01T10:00:00Z "p"`},
		"project": {BookingAudit, created, projected, "state requested -> scheduled; no reservation -> gpubridge-4 2 2026-12-01T09:00:00Z..2026-12-01T10:00:00Z"},
		"maintenance": {MaintenanceAudit, nil, s(`{"id":1,"nodes":["gpu-b"],"start":"2026-12-02T00:00:00Z","end":"2026-12-03T00:00:00Z","reason":"firmware"}`),
			`gpu-b 2026-12-02T00:00:00Z..2026-12-03T00:00:00Z "firmware"`},
	}
	for name, c := range cases {
		if got := c.summary(c.before, c.after); got != c.want {
			t.Errorf("%s: %q\nwant %q", name, got, c.want)
		}
	}
}
