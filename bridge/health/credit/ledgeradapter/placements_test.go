package ledgeradapter

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// TestBookedPlacementsOf: a GPU booking on one node holds its count there;
// a whole-node booking each node's recorded GPUs per type; a cancelled one
// until its cancel time; a spread GPU booking, one without nodes, one
// cancelled before it started, a node booking without its figure and one
// outside the window are left out.
func TestBookedPlacementsOf(t *testing.T) {
	h := func(n float64) time.Time {
		return time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC).Add(time.Duration(n * float64(time.Hour)))
	}
	on := func(nodes ...string) reserve.Held { return reserve.Held{Reservation: "gpubridge-x", Nodes: nodes} }
	bs := []reserve.Booking{
		{ID: 1, Tenant: "Acme", Kind: reserve.KindGPU, GPUType: "h100", Count: 2, Start: h(0), End: h(4), Held: on("gpu-a")},
		{ID: 2, Tenant: "acme", Kind: reserve.KindNode, NodeClass: "mig", Count: 2, PerNode: map[string]int{"1g.10gb": 7, "3g.40gb": 2, "a100": 0},
			Start: h(1), End: h(5), Held: on("gpu-b", "gpu-c")},
		{ID: 3, Tenant: "acme", Kind: reserve.KindGPU, GPUType: "h100", Count: 6, Start: h(0), End: h(4), Held: on("gpu-a", "gpu-d")}, // spread
		{ID: 4, Tenant: "acme", Kind: reserve.KindGPU, GPUType: "h100", Count: 1, Start: h(0), End: h(4)},                             // not placed
		{ID: 5, Tenant: "acme", Kind: reserve.KindGPU, GPUType: "h100", Count: 1, Start: h(0), End: h(4), State: reserve.StateCancelled,
			CancelledAt: h(2), Held: reserve.Held{Nodes: []string{"gpu-a"}}}, // gone from Slurm: where it was
		{ID: 6, Tenant: "acme", Kind: reserve.KindGPU, GPUType: "h100", Count: 1, Start: h(3), End: h(4), State: reserve.StateCancelled,
			CancelledAt: h(2), Held: on("gpu-a")}, // cancelled before it started
		{ID: 7, Tenant: "acme", Kind: reserve.KindNode, NodeClass: "dgx", Count: 1, Start: h(0), End: h(4), Held: on("gpu-a")}, // no PerNode
		{ID: 8, Tenant: "acme", Kind: reserve.KindGPU, GPUType: "h100", Count: 1, Start: h(10), End: h(12), Held: on("gpu-a")}, // after the window
		{ID: 9, Tenant: "acme", Kind: reserve.KindGPU, GPUType: "h100", Count: 1, Start: h(0), End: h(4), State: reserve.StateCancelled,
			Held: on("gpu-a")}, // cancelled without a time
	}
	want := []BookedPlacement{
		{ID: 1, Account: "acme", Node: "gpu-a", Type: "h100", GPUs: 2, Start: h(0), End: h(4), RateFrom: h(0)},
		{ID: 2, Account: "acme", Node: "gpu-b", Type: "1g.10gb", GPUs: 7, Start: h(1), End: h(5), RateFrom: h(1)},
		{ID: 2, Account: "acme", Node: "gpu-b", Type: "3g.40gb", GPUs: 2, Start: h(1), End: h(5), RateFrom: h(1)},
		{ID: 2, Account: "acme", Node: "gpu-c", Type: "1g.10gb", GPUs: 7, Start: h(1), End: h(5), RateFrom: h(1)},
		{ID: 2, Account: "acme", Node: "gpu-c", Type: "3g.40gb", GPUs: 2, Start: h(1), End: h(5), RateFrom: h(1)},
		{ID: 5, Account: "acme", Node: "gpu-a", Type: "h100", GPUs: 1, Start: h(0), End: h(2), RateFrom: h(0)},
	}
	if diff := cmp.Diff(want, BookedPlacementsOf(bs, nil, h(-1), h(8))); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// TestBookedPlacementsFollowTheHistory: with a placement history, a GPU
// booking moved off gpu-a at 2.5h is on gpu-a from its start to 2.5h (a
// row without nodes at 2h continues it) and on gpu-b until 3h; moved back
// to gpu-a at 3h it is a second part there (Part 1, its own credit key).
// A whole-node booking follows its node lists the same way (the same
// nodes again continue a part); the first placement counts from the
// window's start, and one recorded after the window's end changes nothing.
func TestBookedPlacementsFollowTheHistory(t *testing.T) {
	h := func(n float64) time.Time {
		return time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC).Add(time.Duration(n * float64(time.Hour)))
	}
	bs := []reserve.Booking{
		{ID: 1, Tenant: "acme", Kind: reserve.KindGPU, GPUType: "h100", Count: 2, Start: h(0), End: h(4),
			Held: reserve.Held{Reservation: "gpubridge-y", Nodes: []string{"gpu-a"}}},
		{ID: 2, Tenant: "acme", Kind: reserve.KindNode, NodeClass: "mig", Count: 1, PerNode: map[string]int{"1g.10gb": 7}, Start: h(1), End: h(5),
			Held: reserve.Held{Nodes: []string{"gpu-c"}}},
	}
	hist := map[int64][]reserve.Placement{
		1: {{Since: h(-3), Nodes: []string{"gpu-a"}}, {Since: h(2)}, {Since: h(2.5), Nodes: []string{"gpu-b"}}, {Since: h(3), Nodes: []string{"gpu-a"}}},
		2: {{Since: h(1.5), Nodes: []string{"gpu-b"}}, {Since: h(3), Nodes: []string{"gpu-b"}}, {Since: h(4), Nodes: []string{"gpu-c"}}, {Since: h(9), Nodes: []string{"gpu-d"}}},
	}
	want := []BookedPlacement{
		{ID: 1, Account: "acme", Node: "gpu-a", Type: "h100", GPUs: 2, Start: h(0), End: h(2.5), RateFrom: h(0)},
		{ID: 1, Account: "acme", Node: "gpu-b", Type: "h100", GPUs: 2, Start: h(2.5), End: h(3), RateFrom: h(0)},
		{ID: 1, Account: "acme", Node: "gpu-a", Type: "h100", GPUs: 2, Start: h(3), End: h(4), RateFrom: h(0), Part: 1},
		{ID: 2, Account: "acme", Node: "gpu-b", Type: "1g.10gb", GPUs: 7, Start: h(1), End: h(4), RateFrom: h(1)},
		{ID: 2, Account: "acme", Node: "gpu-c", Type: "1g.10gb", GPUs: 7, Start: h(4), End: h(5), RateFrom: h(1)},
	}
	if diff := cmp.Diff(want, BookedPlacementsOf(bs, hist, h(-1), h(8))); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}
