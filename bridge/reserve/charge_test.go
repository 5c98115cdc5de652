package reserve

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

// A node booking is one window per GPU type of its class: Count × the GPUs
// per node admission recorded, whatever the pool holds now; a class
// without GPUs is one window of none; types with 0 are left out.
func TestBookedWindowsNodeBookings(t *testing.T) {
	t0 := time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC)
	node := func(id int64, count int, per map[string]int) Booking {
		return Booking{ID: id, Tenant: "Acme", Kind: KindNode, NodeClass: "dgx", Count: count, Start: t0, End: t0.Add(2 * time.Hour),
			State: StateScheduled, PerNode: per}
	}
	cancelled := node(4, 1, map[string]int{"h100": 4})
	cancelled.State, cancelled.CancelledAt = StateCancelled, t0.Add(30*time.Minute)
	ws, un := BookedWindows([]Booking{
		node(1, 2, map[string]int{"h100": 4}),
		node(2, 3, map[string]int{"h100": 1, "1g.10gb": 7, "3g.40gb": 0}),
		node(3, 1, map[string]int{}),
		cancelled,
	})
	s, e := t0.Unix(), t0.Add(2*time.Hour).Unix()
	want := []meter.BookedWindow{
		{ID: 1, Account: "acme", Type: "h100", Count: 8, Start: s, End: e},
		{ID: 2, Account: "acme", Type: "1g.10gb", Count: 21, Start: s, End: e},
		{ID: 2, Account: "acme", Type: "h100", Count: 3, Start: s, End: e},
		{ID: 3, Account: "acme", Type: "", Count: 0, Start: s, End: e},
		{ID: 4, Account: "acme", Type: "h100", Count: 4, Start: s, End: e, CancelledAt: t0.Add(30 * time.Minute).Unix()},
	}
	if d := cmp.Diff(want, ws); d != "" || len(un) != 0 {
		t.Errorf("windows (-want +got)\n%s\nuncharged %q", d, un)
	}
}

func TestBookedWindows(t *testing.T) {
	t0 := time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC)
	bs := []Booking{
		{ID: 1, Tenant: "Acme", Kind: KindGPU, GPUType: "h100", Count: 2, Start: t0, End: t0.Add(time.Hour), State: StateScheduled},
		{ID: 2, Tenant: "acme", Kind: KindGPU, GPUType: "h100", Count: 1, Start: t0, End: t0.Add(time.Hour), State: StateCancelled, CancelledAt: t0.Add(-time.Minute)},
		{ID: 3, Tenant: "acme", Kind: KindNode, NodeClass: "dgx", Count: 1, Start: t0, End: t0.Add(time.Hour)}, // no PerNode: stored before it was recorded
		{ID: 4, Tenant: "acme", Kind: KindGPU, GPUType: "h100", Count: 1, Start: t0, End: t0.Add(time.Hour), State: StateCancelled},
	}
	ws, un := BookedWindows(bs)
	if len(ws) != 2 || ws[0].ID != 1 || ws[0].Account != "acme" || ws[0].Count != 2 || ws[0].CancelledAt != 0 || ws[0].End-ws[0].Start != 3600 ||
		ws[1].ID != 2 || ws[1].CancelledAt != t0.Add(-time.Minute).Unix() {
		t.Errorf("windows %+v", ws)
	}
	if len(un) != 2 || !strings.Contains(un[0], "booking 3") || !strings.Contains(un[0], "gpubridge modify booking 3 set") || !strings.Contains(un[1], "booking 4") {
		t.Errorf("uncharged %q", un)
	}
}
