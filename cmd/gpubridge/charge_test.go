package main

import (
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

func TestBookedWindows(t *testing.T) {
	t0 := time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC)
	bs := []reserve.Booking{
		{ID: 1, Tenant: "Acme", Kind: reserve.KindGPU, GPUType: "h100", Count: 2, Start: t0, End: t0.Add(time.Hour), State: reserve.StateScheduled},
		{ID: 2, Tenant: "acme", Kind: reserve.KindGPU, GPUType: "h100", Count: 1, Start: t0, End: t0.Add(time.Hour), State: reserve.StateCancelled, CancelledAt: t0.Add(-time.Minute)},
		{ID: 3, Tenant: "acme", Kind: reserve.KindNode, NodeClass: "dgx", Count: 1, Start: t0, End: t0.Add(time.Hour)},
		{ID: 4, Tenant: "acme", Kind: reserve.KindGPU, GPUType: "h100", Count: 1, Start: t0, End: t0.Add(time.Hour), State: reserve.StateCancelled},
	}
	ws, un := bookedWindows(bs)
	if len(ws) != 2 || ws[0].ID != 1 || ws[0].Account != "acme" || ws[0].Count != 2 || ws[0].CancelledAt != 0 || ws[0].End-ws[0].Start != 3600 ||
		ws[1].ID != 2 || ws[1].CancelledAt != t0.Add(-time.Minute).Unix() {
		t.Errorf("windows %+v", ws)
	}
	if len(un) != 2 || !strings.Contains(un[0], "booking 3") || !strings.Contains(un[1], "booking 4") {
		t.Errorf("uncharged %q", un)
	}
}
