package reserve

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseQueries(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 500, time.UTC)
	day := 24 * time.Hour
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

	lf, ps := ParseList(map[string]string{"tenant": "acme", "state": "active,cancelled", "from": "now+1d"}, now, Zone{})
	if len(ps) > 0 || lf.Tenant != "acme" || !cmp.Equal(lf.States, []State{StateActive, StateCancelled}) || !lf.From.Equal(t0.Add(day)) || !lf.To.IsZero() {
		t.Errorf("ParseList = %+v, %v", lf, ps)
	}
	if _, ps := ParseList(map[string]string{"state": "gone", "to": "soon"}, now, Zone{}); strings.Join(ps.Fields(), ",") != "state,to" {
		t.Errorf("ParseList problems %v; want state and to", ps)
	}
	// A tenant list matched nothing, silently (exit 0, empty table).
	if _, ps := ParseList(map[string]string{"tenant": "acme,globex"}, now, Zone{}); strings.Join(ps.Fields(), ",") != "tenant" || !strings.Contains(ps.Error(), "one tenant at a time") {
		t.Errorf("ParseList tenant=acme,globex: %v; want a tenant problem", ps)
	}

	cases := map[string]struct {
		args     map[string]string
		from, to time.Time
		step     time.Duration
	}{
		"default":    {map[string]string{}, t0, t0.Add(14 * day), day},
		"short":      {map[string]string{"to": "now+2d"}, t0, t0.Add(2 * day), time.Hour},
		"from only":  {map[string]string{"from": "now+1d"}, t0.Add(day), t0.Add(15 * day), day},
		"given step": {map[string]string{"step": "6h"}, t0, t0.Add(14 * day), 6 * time.Hour},
	}
	for name, c := range cases {
		q, ps := ParseAvailability(c.args, now, Zone{})
		if len(ps) > 0 || !q.From.Equal(c.from) || !q.To.Equal(c.to) || q.Step != c.step {
			t.Errorf("%s: ParseAvailability = %+v, %v; want %v..%v step %v", name, q, ps, c.from, c.to, c.step)
		}
	}

	q, ps := ParseSlotQuery(map[string]string{"type": "h100", "count": "2", "duration": "1d"}, now, Zone{})
	if len(ps) > 0 || q.Limit != 3 || q.Count != 2 || q.Duration != day || !q.After.IsZero() {
		t.Errorf("ParseSlotQuery = %+v, %v", q, ps)
	}
	_, ps = ParseSlotQuery(map[string]string{"limit": "0", "duration": "x"}, now, Zone{})
	if got := strings.Join(ps.Fields(), ","); got != "count,duration,limit" {
		t.Errorf("ParseSlotQuery problems %v; want count, duration and limit", ps)
	}

	m, ps := ParseMaintenance(map[string]string{"nodes": "gpu-a, gpu-b", "start": "now+1d", "duration": "2h", "reason": " fw "}, now, Zone{})
	if len(ps) > 0 || !cmp.Equal(m.Nodes, []string{"gpu-a", "gpu-b"}) || m.Reason != "fw" || m.End.Sub(m.Start) != 2*time.Hour {
		t.Errorf("ParseMaintenance = %+v, %v", m, ps)
	}
	_, ps = ParseMaintenance(map[string]string{"end": "now", "duration": "1h"}, now, Zone{})
	if got := ps.Error(); !strings.Contains(got, "start: required") || !strings.Contains(got, "end: give end= or duration= (one of them)") {
		t.Errorf("ParseMaintenance problems: %s", got)
	}
}

func TestLoadZone(t *testing.T) {
	if z, err := LoadZone(""); err != nil || z.Location != nil {
		t.Errorf("LoadZone(\"\") = %+v, %v; want no zone", z, err)
	}
	if z, err := LoadZone(":Europe/Berlin"); err != nil || z.Name != "Europe/Berlin" || z.Location == nil {
		t.Errorf("LoadZone(:Europe/Berlin) = %+v, %v", z, err)
	}
	if _, err := LoadZone("Mars/Olympus"); err == nil || !strings.Contains(err.Error(), `TZ="Mars/Olympus" is not a time zone`) {
		t.Errorf("LoadZone(Mars/Olympus) = %v", err)
	}
}
