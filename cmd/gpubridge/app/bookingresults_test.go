package app

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/view"
	"github.com/gpubridge/gpubridge/internal/table"
)

// The booking results print what the commands printed before they
// returned one value: the views of bridge/reserve/view, and with --json
// the record itself (a booking, a window, a report), not the result's
// wrapper.
func TestBookingResultsPrintTheirViews(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	b := reserve.Booking{ID: 4, Tenant: "acme", Kind: reserve.KindGPU, GPUType: "h100", Count: 2, Start: at.Add(48 * time.Hour), End: at.Add(72 * time.Hour), State: reserve.StateRequested}
	grown := b
	grown.Count = 3
	set := reserve.Settings{LeadTime: time.Hour, Prefix: "gpubridge-"}
	z := view.Times{}
	m := reserve.Maintenance{ID: 1, Nodes: []string{"gpu-b"}, Start: at, End: at.Add(24 * time.Hour), Reason: "firmware"}
	rep := reserve.Report{At: at, States: map[reserve.State]int{reserve.StateScheduled: 1}}
	req := view.Requests{Reads: 3, Writes: 1}
	q := reserve.SlotQuery{Type: "h100", Count: 8, Duration: 14 * 24 * time.Hour}
	cases := map[string]struct {
		text, want       string
		record, wantJSON any // nil: no record of its own
	}{
		"add booking": {text: AddedBooking{Booking: b, Settings: set, Times: z, At: at}.Text(), want: view.Added(b, set, z, at),
			record: AddedBooking{Booking: b, Settings: set, Times: z, At: at}, wantJSON: b},
		"modify booking": {text: ModifiedBooking{ID: 4, Before: b, After: grown, Times: z}.Text(), want: view.Modified(4, b, grown, z),
			record: ModifiedBooking{ID: 4, Before: b, After: grown}, wantJSON: grown},
		"delete bookings": {text: CancelledBookings{IDs: []int64{4, 5}, Settings: set}.Text(), want: view.Cancelled(4, set) + view.Cancelled(5, set)},
		"delete none":     {text: CancelledBookings{Settings: set}.Text(), want: ""},
		"no slot":         {text: FoundSlots{Query: q}.Text(), want: view.NoSlot(q)},
		"add maintenance": {text: AddedMaintenance{Maintenance: m, Hit: []reserve.Booking{b}, Times: z}.Text(), want: view.MaintenanceAdded(m, []reserve.Booking{b}, z)},
		"project": {text: Projected{Report: rep, DryRun: true, Requests: req}.Text(), want: view.ProjectReport(rep, true, req),
			record: Projected{Report: rep, DryRun: true, Requests: req}, wantJSON: rep},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.text != tc.want {
				t.Errorf("text %q\nwant %q", tc.text, tc.want)
			}
			if tc.record == nil {
				return
			}
			got, err := json.Marshal(tc.record)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(tc.wantJSON)
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("--json (-want +got)\n%s", diff)
			}
		})
	}
}

func TestBookingResultsTables(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	b := reserve.Booking{ID: 4, Tenant: "acme", Kind: reserve.KindGPU, GPUType: "h100", Count: 2, Start: at, End: at.Add(time.Hour)}
	local := view.Times{Zone: reserve.Zone{Location: time.FixedZone("X", 3600)}, Local: true}
	m := reserve.Maintenance{ID: 1, Nodes: []string{"gpu-b"}, Start: at, End: at.Add(time.Hour)}
	slots := []reserve.Slot{{Start: at, End: at.Add(time.Hour)}}
	cases := map[string]struct{ got, want table.Table }{
		"show bookings":    {BookingList{Bookings: []reserve.Booking{b}, Times: local}.Table(), view.Bookings([]reserve.Booking{b}, local)},
		"find slot":        {FoundSlots{Slots: slots, Times: local}.Table(), view.Slots(slots, local)},
		"show maintenance": {MaintenanceList{Windows: []reserve.Maintenance{m}, Times: local}.Table(), view.Maintenance([]reserve.Maintenance{m}, local)},
	}
	for name, tc := range cases {
		if diff := cmp.Diff(tc.want, tc.got); diff != "" {
			t.Errorf("%s (-want +got)\n%s", name, diff)
		}
	}
}

// show availability's table is the view's form for -P or not, its --json
// the availability itself (every step), and the notes follow the table
// for people only.
func TestBookingAvailabilityPrintout(t *testing.T) {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	av := reserve.Availability{From: at, To: at.Add(48 * time.Hour), Step: reserve.Span(24 * time.Hour), Resources: []reserve.ResourceAvailability{{
		Resource: reserve.GPU("h100"), Type: "h100", Pool: 4,
		Buckets: []reserve.Bucket{{From: at, To: at.Add(24 * time.Hour), Capacity: 4, Committed: 1, Free: 3}, {From: at.Add(24 * time.Hour), To: at.Add(48 * time.Hour), Capacity: 4, Free: 4}},
	}}}
	r := BookingAvailability{Availability: av}
	notes := view.AvailabilityNotes(av, view.Times{})
	cases := map[string]struct {
		o         table.Options
		withNotes bool
	}{
		"aligned": {withNotes: true},
		"-P":      {o: table.Options{Parsable: true}},
		"--json":  {o: table.Options{JSON: true}},
	}
	for name, tc := range cases {
		p := r.Printout(tc.o)
		if len(p.Parts) == 0 || p.Parts[0].Table == nil {
			t.Fatalf("%s: no table first: %+v", name, p)
		}
		tb := *p.Parts[0].Table
		want := view.Availability(av, view.Times{}, tc.o.Parsable)
		if !cmp.Equal(want.Header, tb.Header) || !cmp.Equal(want.Rows, tb.Rows) {
			t.Errorf("%s: table %v %v, want the view's %v %v", name, tb.Header, tb.Rows, want.Header, want.Rows)
		}
		if got, _ := json.Marshal(tb.Raw); string(got) != mustJSON(t, av) {
			t.Errorf("%s: --json %s, want the availability", name, got)
		}
		gotNotes := len(p.Parts) == 2 && p.Parts[1].Text == notes && !p.Parts[1].Stderr
		if gotNotes != tc.withNotes || len(p.Parts) > 2 {
			t.Errorf("%s: parts %+v, notes wanted: %v", name, p.Parts, tc.withNotes)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
