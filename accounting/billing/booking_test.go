package billing_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
)

// The charger writes the bookings it can charge, then fails naming the
// ones it cannot (never charging them at 0); a re-run writes nothing.
func TestBookingChargerReportsUncharged(t *testing.T) {
	ctx := context.Background()
	store := ledger.NewMemory()
	start := time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC).Unix()
	windows := []meter.BookedWindow{{ID: 3, Account: "acme", Type: "h100", Count: 2, Start: start, End: start + 3600}}
	uncharged := []string{"booking 4 (node:dgx:1, whole nodes): node bookings are not charged yet"}
	ch := billing.BookingCharger{Cluster: "c", Ledger: store, Policy: meter.Cancellation{FreeBefore: time.Hour},
		Bookings: func(context.Context) ([]meter.BookedWindow, []string, error) { return windows, uncharged, nil }}
	res, err := ch.Charge(ctx)
	if !errors.Is(err, billing.ErrUncharged) || !strings.Contains(err.Error(), "booking 4") || res.Lines != 1 || res.Bookings != 2 {
		t.Fatalf("charge: %+v %v, want 1 line and ErrUncharged naming booking 4", res, err)
	}
	uncharged = nil
	if res, err := ch.Charge(ctx); err != nil || res.Lines != 0 {
		t.Errorf("re-run: %+v %v", res, err)
	}
	var sec int64
	if err := store.Charges(ctx, "c", ledger.LineQuery{Booked: meter.PeriodOfUnix(start)}, func(l meter.Line) error { sec += l.GPUSeconds; return nil }); err != nil || sec != 7200 {
		t.Errorf("charged %d GPU-seconds (%v), want 7200", sec, err)
	}
	// Cancelled in time: reversed to nothing.
	windows[0].CancelledAt = start - 2*3600
	if res, err := ch.Charge(ctx); err != nil || res.Lines != 1 || res.Corrections != 1 {
		t.Errorf("cancel: %+v %v", res, err)
	}
	sec = 0
	if err := store.Charges(ctx, "c", ledger.LineQuery{Booked: meter.PeriodOfUnix(start)}, func(l meter.Line) error { sec += l.GPUSeconds; return nil }); err != nil || sec != 0 {
		t.Errorf("after the cancel: %d GPU-seconds (%v), want 0", sec, err)
	}
}

// TestChargeResultSummary: charge bookings' line counts the bookings
// charged (read less uncharged) and the lines written.
func TestChargeResultSummary(t *testing.T) {
	res := billing.ChargeResult{Bookings: 5, WriteStats: meter.WriteStats{Lines: 4, Corrections: 2, Adjustments: 1}, Uncharged: []string{"booking 9"}}
	if got, want := res.Summary(), "charged 4 booking(s): 4 ledger line(s) written, 2 correction(s), 1 in a later period\n"; got != want {
		t.Errorf("Summary %q\nwant %q", got, want)
	}
}
