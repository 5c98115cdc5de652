package ledgertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
)

// BookingStore is a Store that keeps booking charges.
type BookingStore interface {
	Store
	ledger.ChargeStore
}

// ChargeSums returns the charged GPU-seconds per (booked period, usage
// period, booking) of the charges booked in periods.
func ChargeSums(t testing.TB, s Store, cluster string, periods ...meter.Period) map[[3]int64]int64 {
	t.Helper()
	out := map[[3]int64]int64{}
	for _, p := range periods {
		err := s.Charges(context.Background(), cluster, ledger.LineQuery{Booked: p, Ordered: true}, func(l meter.Line) error {
			if !l.Charge || l.Tier != meter.Booked || l.Kind() != meter.KindBooking || l.Run.JobID != 0 {
				t.Errorf("charge line %+v", l)
			}
			out[[3]int64{int64(l.Booked), int64(l.Period), l.Booking}] += l.GPUSeconds
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}

// RunBookings is the conformance suite of booking charges: idempotent by
// booking and period, corrections for a changed or cancelled booking, a
// closed period never rewritten, the close pricing them (and refusing a
// type without a booked rate), used lines inside a booking kept apart.
func RunBookings(t *testing.T, newStore func(t *testing.T) BookingStore) {
	ctx := context.Background()
	nov, dec, jan := P("2026-11"), P("2026-12"), P("2027-01")
	h := int64(3600)
	policy := meter.Cancellation{FreeBefore: 24 * time.Hour}
	charge := func(t *testing.T, s BookingStore, c string, ws ...meter.BookedWindow) meter.WriteStats {
		t.Helper()
		var bcs []meter.BookingCharge
		for _, w := range ws {
			us, err := meter.BookingCharges(c, w, policy)
			if err != nil {
				t.Fatal(err)
			}
			bcs = append(bcs, meter.BookingCharge{Booked: w, Charges: us})
		}
		st, err := s.ApplyCharges(ctx, c, TS("2026-11-20 00:00:00"), bcs)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	// Booking 1: 2 h100 from Nov 30 22:00 to Dec 1 04:00 (a month end).
	b1 := meter.BookedWindow{ID: 1, Account: "acme", Type: "h100", Count: 2, Start: TS("2026-11-30 22:00:00"), End: TS("2026-12-01 04:00:00")}
	b2 := meter.BookedWindow{ID: 2, Account: "beta", Type: "h100", Count: 1, Start: TS("2026-11-10 00:00:00"), End: TS("2026-11-11 00:00:00")}

	t.Run("charges split at the month end, a re-run adds nothing", func(t *testing.T) {
		s, c := newStore(t), cluster(t)
		if st := charge(t, s, c, b1, b2); st.Lines != 3 {
			t.Errorf("first run: %d lines, want 3", st.Lines)
		}
		if st := charge(t, s, c, b1, b2); st.Lines != 0 {
			t.Errorf("re-run: %d lines, want 0", st.Lines)
		}
		want := map[[3]int64]int64{{int64(nov), int64(nov), 1}: 2 * 2 * h, {int64(dec), int64(dec), 1}: 2 * 4 * h, {int64(nov), int64(nov), 2}: 24 * h}
		if d := cmp.Diff(want, ChargeSums(t, s, c, nov, dec)); d != "" {
			t.Errorf("(-want +got)\n%s", d)
		}
		// Charges are not usage lines.
		if n := len(AllLines(t, s, c, nov)); n != 0 {
			t.Errorf("%d usage lines", n)
		}
		var acct []int64
		if err := s.Charges(ctx, c, ledger.LineQuery{Booked: nov, Account: "beta"}, func(l meter.Line) error { acct = append(acct, l.Booking); return nil }); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]int64{2}, acct); d != "" {
			t.Errorf("account filter (-want +got)\n%s", d)
		}
	})

	t.Run("a changed booking gets corrections, a cancelled one is reversed", func(t *testing.T) {
		s, c := newStore(t), cluster(t)
		charge(t, s, c, b1, b2)
		longer := b1
		longer.End = TS("2026-12-01 06:00:00") // +2 h in December
		st := charge(t, s, c, longer, b2)
		if st.Lines != 1 || st.Corrections != 1 {
			t.Errorf("extend: %+v, want 1 correction", st)
		}
		cancelled := b2
		cancelled.CancelledAt = TS("2026-11-01 00:00:00") // in time: free
		if st := charge(t, s, c, longer, cancelled); st.Lines != 1 || st.Corrections != 1 {
			t.Errorf("cancel: %+v, want 1 reversal", st)
		}
		want := map[[3]int64]int64{{int64(nov), int64(nov), 1}: 2 * 2 * h, {int64(dec), int64(dec), 1}: 2 * 6 * h}
		if d := cmp.Diff(want, ChargeSums(t, s, c, nov, dec)); d != "" {
			t.Errorf("(-want +got)\n%s", d)
		}
		// A booking left out of a run is left alone.
		if st := charge(t, s, c); st.Lines != 0 {
			t.Errorf("empty run wrote %d", st.Lines)
		}
		if d := cmp.Diff(want, ChargeSums(t, s, c, nov, dec)); d != "" {
			t.Errorf("after an empty run (-want +got)\n%s", d)
		}
	})

	t.Run("close prices charges; a closed period's change lands in the next open one", func(t *testing.T) {
		s, c := newStore(t), cluster(t)
		card := Card(t)
		req := ledger.CloseRequest{Cluster: c, Period: nov, Now: TSTime("2026-12-02 03:00:00"), Actor: "test", Card: card, LockWait: time.Second}
		now := TS("2026-12-02 03:00:00")
		if _, err := s.ReplaceAccruals(ctx, c, now, nil); err != nil {
			t.Fatal(err)
		}
		// One job inside booking 1 (tier booked, rate 0): 1 GPU for 1 h.
		r := run(c, 10, 1, "acme", "pool", TS("2026-11-30 22:30:00"), TS("2026-11-30 23:30:00"), meter.Alloc{Type: "h100", Count: 1})
		r.Reservation = "gpubridge-1"
		rules := Rules
		rules.BookingPrefix = "gpubridge-"
		mr := meter.MeasuredRun{Run: r, Usages: meter.Split(r, now, rules)}
		if _, err := s.ApplyBatch(ctx, c, now, batch("slurmdb", TS("2026-11-01 00:00:00"), now, []meter.MeasuredRun{mr})); err != nil {
			t.Fatal(err)
		}
		charge(t, s, c, b1)
		_, err := ledger.Close(ctx, s, req)
		var mre *pricing.MissingRatesError
		if !errors.As(err, &mre) || len(mre.Items) != 1 || mre.Items[0].Tier != meter.Booked || mre.Items[0].GPUSeconds != 4*h {
			t.Fatalf("close without a booked rate: %v, want a MissingRatesError for h100 (booked)", err)
		}
		card, err = card.WithRate(pricing.Rate{Type: "h100", Tier: meter.Booked, PerGPUHour: mustPrice(t, "1.50"), From: mustDate("2020-01-01")})
		if err != nil {
			t.Fatal(err)
		}
		req.Card = card
		rec, err := ledger.Close(ctx, s, req)
		if err != nil {
			t.Fatal(err)
		}
		// 2 lines (the job at rate 0, the charge 4 GPU-hours × 1.50);
		// GPU-seconds are the used ones only.
		if rec.Lines != 2 || rec.GPUSeconds != h || rec.Amount.String() != "6.00" {
			t.Errorf("closed: %d lines, %d GPU-seconds, %s; want 2, 3600, 6.00", rec.Lines, rec.GPUSeconds, rec.Amount)
		}
		inside := AllLines(t, s, c, nov)
		if len(inside) != 1 || inside[0].Tier != meter.Booked || inside[0].Booking != 1 || inside[0].Charge {
			t.Errorf("inside lines: %+v", inside)
		}
		// Booking 1 moved to start an hour later: its November part
		// shrinks, but the closed November is not rewritten; the
		// difference is booked in December.
		shorter := b1
		shorter.Start = TS("2026-11-30 23:00:00")
		charge(t, s, c, shorter)
		want := map[[3]int64]int64{{int64(nov), int64(nov), 1}: 2 * 2 * h, {int64(dec), int64(nov), 1}: -2 * h, {int64(dec), int64(dec), 1}: 2 * 4 * h}
		if d := cmp.Diff(want, ChargeSums(t, s, c, nov, dec, jan)); d != "" {
			t.Errorf("(-want +got)\n%s", d)
		}
	})
}

func mustPrice(t testing.TB, s string) pricing.Price {
	p, err := pricing.ParsePrice(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
