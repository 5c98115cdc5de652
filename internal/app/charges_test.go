package app

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/accounting/pricing"
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
	ws, un := BookedWindows(bs)
	if len(ws) != 2 || ws[0].ID != 1 || ws[0].Account != "acme" || ws[0].Count != 2 || ws[0].CancelledAt != 0 || ws[0].End-ws[0].Start != 3600 ||
		ws[1].ID != 2 || ws[1].CancelledAt != t0.Add(-time.Minute).Unix() {
		t.Errorf("windows %+v", ws)
	}
	if len(un) != 2 || !strings.Contains(un[0], "booking 3") || !strings.Contains(un[1], "booking 4") {
		t.Errorf("uncharged %q", un)
	}
}

func TestCardCosterUsesTheBookedTier(t *testing.T) {
	card, err := pricing.ParseYAML([]byte("version: 1\ncurrency: EUR\nrates:\n  - {type: h100, perGPUHour: \"2.00\", from: 2020-01-01}\n  - {type: h100, tier: booked, perGPUHour: \"1.50\", from: 2026-01-01}\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := CardCoster{card}
	a, err := c.BookedCost("h100", 2*3600, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	if err != nil || a.String() != "3.00" {
		t.Errorf("cost %s %v, want 3.00 (2 GPU-hours at the booked 1.50)", a, err)
	}
	// Before the booked rate exists, the rate for both usage tiers does
	// not price a booking.
	if _, err := c.BookedCost("h100", 3600, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)); !errors.Is(err, pricing.ErrNoRate) {
		t.Errorf("before the booked rate: %v, want ErrNoRate", err)
	}
}
