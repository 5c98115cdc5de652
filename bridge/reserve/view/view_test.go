package view

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

// Equal steps are one row; the parsable form has To and Pool, not the bar;
// the notes say until when the last row holds and what reduces capacity.
func TestAvailability(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	h := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) }
	av := reserve.Availability{From: h(0), To: h(3), Step: reserve.Span(time.Hour), Resources: []reserve.ResourceAvailability{{
		Resource: reserve.GPU("h100"), Type: "h100", Pool: 4,
		Buckets: []reserve.Bucket{
			{From: h(0), To: h(1), Capacity: 4, Committed: 2, Free: 2},
			{From: h(1), To: h(2), Capacity: 4, Committed: 2, Free: 2},
			{From: h(2), To: h(3), Capacity: 2, Committed: 1, Free: 1},
		},
		Reductions: []reserve.Reduction{{Start: h(2), Count: 2, Reason: "maintenance 1"}},
	}}}
	got := Availability(av, Times{}, false).Rows
	want := [][]string{
		{"h100", "2026-12-01T00:00:00Z", "2", "2", "4", "##.."},
		{"h100", "2026-12-01T02:00:00Z", "1", "1", "2", "#.xx"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("table (-want +got)\n%s", diff)
	}
	got = Availability(av, Times{}, true).Rows
	if want := []string{"h100", "2026-12-01T00:00:00Z", "2026-12-01T02:00:00Z", "2", "2", "4", "4"}; !cmp.Equal(want, got[0]) {
		t.Errorf("parsable row %q; want %q", got[0], want)
	}
	notes := AvailabilityNotes(av, Times{})
	for _, w := range []string{"the last until 2026-12-01T03:00:00Z.", "Per 1h step", "Pool: h100 4.", "  h100 -2: maintenance 1 (from 2026-12-01T02:00:00Z)"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
}

func TestProjectReport(t *testing.T) {
	rep := reserve.Report{States: map[reserve.State]int{}}
	if got, want := ProjectReport(rep, true, Requests{Reads: 3}), "Dry run (nothing changed): 0 action(s), 0 failed; bookings: (none); slurmrestd requests: 3 read(s), 0 write(s).\n"; got != want {
		t.Errorf("empty report %q; want %q", got, want)
	}
	rep = reserve.Report{
		States: map[reserve.State]int{reserve.StateScheduled: 2, reserve.StateActive: 1},
		Now:    []reserve.ResourceNow{{Resource: reserve.GPU("h100"), Type: "h100", Capacity: 4, Booked: 3, Free: 1, AtRisk: 1}},
	}
	got := ProjectReport(rep, false, Requests{Reads: 2, Writes: 1})
	for _, w := range []string{"Projection complete: 0 action(s), 0 failed; bookings: 2 scheduled, 1 active;", "Now: h100 3/4 booked, 1 free, 1 at risk.\n"} {
		if !strings.Contains(got, w) {
			t.Errorf("report lacks %q:\n%s", w, got)
		}
	}
}

// TestAdded: the message says when the reservation is made, and why a
// booking that starts now shows at-risk until the next projection (it
// said "made 1d before the start" for a booking starting now).
func TestAdded(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	set := reserve.Settings{Prefix: "gpubridge-", LeadTime: 24 * time.Hour}
	far := reserve.Booking{ID: 1, Tenant: "acme", Kind: reserve.KindGPU, GPUType: "h100", Count: 2, Start: now.Add(48 * time.Hour), End: now.Add(72 * time.Hour)}
	if got := Added(far, set, Times{}, now); !strings.Contains(got, "(requested)") || !strings.Contains(got, "is made 1d before the start") {
		t.Errorf("far ahead: %s", got)
	}
	soon := far
	soon.Start, soon.End = now, now.Add(time.Hour)
	got := Added(soon, set, Times{}, now)
	if !strings.Contains(got, "(at-risk)") || !strings.Contains(got, "by the next projection") || !strings.Contains(got, "Slurm holds nothing for it yet") || strings.Contains(got, "before the start") {
		t.Errorf("starting now: %s", got)
	}
	inLead := far
	inLead.Start = now.Add(time.Hour)
	if got := Added(inLead, set, Times{}, now); !strings.Contains(got, "(requested)") || !strings.Contains(got, "by the next projection") || strings.Contains(got, "at-risk") {
		t.Errorf("inside the lead time: %s", got)
	}
}

// TestProjectionLines: the health report's lines of a projection, each
// action with its outcome (and error), then each booking at risk.
func TestProjectionLines(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rep := reserve.Report{
		Actions: []reserve.ActionResult{
			{Action: reserve.Action{Kind: reserve.ActRecreate, Booking: 4, Name: "gpubridge-4", Why: "node gpu-a down"}, Outcome: "done"},
			{Action: reserve.Action{Kind: reserve.ActCreate, Booking: 5, Name: "gpubridge-5", Why: "missing in Slurm"}, Outcome: "failed", Error: "no room"},
		},
		AtRisk: []reserve.Booking{{ID: 6, Tenant: "acme", Kind: reserve.KindGPU, GPUType: "h100", Count: 2, Start: t0, End: t0.Add(time.Hour), Note: "gpu-a is down"}},
	}
	want := []string{
		"recreate reservation gpubridge-4 (booking 4): node gpu-a down (done)",
		"create reservation gpubridge-5 (booking 5): missing in Slurm (failed): no room",
		"booking 6 of acme (h100:2) at risk: gpu-a is down",
	}
	if diff := cmp.Diff(want, ProjectionLines(rep)); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if got := ProjectionLines(reserve.Report{}); got != nil {
		t.Errorf("empty report: %q, want none", got)
	}
}

// TestMaintenanceMessages: delete maintenance's confirmation and message
// name the window.
func TestMaintenanceMessages(t *testing.T) {
	if got, want := MaintenanceDeletePrompt(7), " Deleting maintenance 7"; got != want {
		t.Errorf("prompt %q, want %q", got, want)
	}
	if got, want := MaintenanceDeleted(reserve.Maintenance{ID: 7, Nodes: []string{"gpu-a", "gpu-b"}}), "Maintenance 7 (gpu-a,gpu-b) deleted.\n"; got != want {
		t.Errorf("deleted %q, want %q", got, want)
	}
}

func TestPerNodePromptAndResult(t *testing.T) {
	t0 := time.Date(2024, 7, 10, 5, 0, 0, 0, time.UTC)
	b := reserve.Booking{ID: 4, Tenant: "acme", Kind: reserve.KindNode, NodeClass: "dgx", Count: 2, Start: t0, End: t0.Add(time.Hour)}
	p := PerNodePrompt(b, map[string]int{"h100": 8}, "h100:4")
	for _, want := range []string{"booking 4 (acme, node:dgx:2, 2024-07-10T05:00:00Z to 2024-07-10T06:00:00Z)", "pernode  -> h100:8 (its class has h100:4 per node in the pool now)", "2 node(s) x that"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	after := b
	after.PerNode = map[string]int{"h100": 8}
	if got := Modified(4, b, after, Times{}); got != "Booking 4 (node:dgx:2): recorded h100:8 GPUs per node. `gpubridge charge bookings` charges it now.\n" {
		t.Errorf("Modified = %q", got)
	}
	if got := Modified(4, after, after, Times{}); got != "Booking 4: nothing to change.\n" {
		t.Errorf("Modified without a change = %q", got)
	}
}
