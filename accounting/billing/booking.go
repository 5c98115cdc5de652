package billing

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
)

// BookingSource lists every booking of the cluster (cancelled and ended
// ones included) as the charge needs them: one window per booking and GPU
// type (a whole-node booking has one per type of its class; all of a
// booking's windows share its account, window and cancel time).
// Uncharged names the bookings it cannot charge and why (a whole-node
// booking stored without its GPUs per node): they are reported, never
// charged at zero.
type BookingSource func(ctx context.Context) (windows []meter.BookedWindow, uncharged []string, err error)

// BookingCharger writes the bookings' charges to the ledger: `gpubridge
// charge bookings`, the daemon's booking-charges job, and a close (before
// it checks the period) all call Charge.
type BookingCharger struct {
	Cluster  string
	Ledger   ledger.ChargeStore
	Bookings BookingSource
	Policy   meter.Cancellation
	// Clock gives now (default time.Now); it stamps the lines only: a
	// booking's charge depends on its window and cancel time alone.
	Clock func() time.Time
	// LockWait is how long to wait for an ingest or close holding the
	// ledger lock (default 1 minute).
	LockWait time.Duration
}

// ChargeResult says what one charge run did.
type ChargeResult struct {
	Bookings int // bookings read
	meter.WriteStats
	// Uncharged lists bookings that could not be charged (see BookingSource).
	Uncharged []string
}

// Summary says in one line what a charge run wrote
// (`gpubridge charge bookings`).
func (r ChargeResult) Summary() string {
	return fmt.Sprintf("charged %d booking(s): %d ledger line(s) written, %d correction(s), %d in a later period\n",
		r.Bookings-len(r.Uncharged), r.Lines, r.Corrections, r.Adjustments)
}

// ErrUncharged is wrapped by the error of a charge run that left bookings
// uncharged.
var ErrUncharged = fmt.Errorf("bookings not charged")

// Charge computes every booking's charge (meter.BookingCharges under the
// cancellation policy) and writes the difference to what the ledger holds,
// under the ledger lock: a re-run adds nothing; a booking changed or
// cancelled since gets correction lines (in the first open period when
// its period is closed). Bookings the source cannot charge fail the run
// after the others are written (ErrUncharged, naming them).
func (c BookingCharger) Charge(ctx context.Context) (ChargeResult, error) {
	now := time.Now
	if c.Clock != nil {
		now = c.Clock
	}
	wait := c.LockWait
	if wait == 0 {
		wait = time.Minute
	}
	windows, uncharged, err := c.Bookings(ctx)
	if err != nil {
		return ChargeResult{}, fmt.Errorf("charge bookings: %w", err)
	}
	bcs, err := bookingCharges(c.Cluster, windows, c.Policy)
	res := ChargeResult{Bookings: len(bcs) + len(uncharged), Uncharged: uncharged}
	if err != nil {
		return res, fmt.Errorf("charge bookings: %w", err)
	}
	release, err := c.Ledger.Lock(ctx, c.Cluster, wait)
	if err != nil {
		return res, fmt.Errorf("charge bookings: %w", err)
	}
	defer release()
	st, err := c.Ledger.ApplyCharges(ctx, c.Cluster, now().Unix(), bcs)
	res.WriteStats = st
	if err != nil {
		return res, fmt.Errorf("charge bookings: %w", err)
	}
	if len(uncharged) > 0 {
		return res, fmt.Errorf("charge bookings: %w: %s", ErrUncharged, strings.Join(uncharged, "; "))
	}
	return res, nil
}

// bookingCharges computes each booking's charges. The windows of one
// booking (a whole-node booking has one per GPU type of its class) make
// one BookingCharge, as the ledger wants it: it reverses the keys of a
// booking that its BookingCharge does not hold.
func bookingCharges(cluster string, windows []meter.BookedWindow, policy meter.Cancellation) ([]meter.BookingCharge, error) {
	bcs := make([]meter.BookingCharge, 0, len(windows))
	at := map[int64]int{}
	for _, w := range windows {
		us, err := meter.BookingCharges(cluster, w, policy)
		if err != nil {
			return nil, err
		}
		i, ok := at[w.ID]
		if !ok {
			at[w.ID] = len(bcs)
			bcs = append(bcs, meter.BookingCharge{Booked: w, Charges: us})
			continue
		}
		first := bcs[i].Booked
		if first.Account != w.Account || first.Start != w.Start || first.End != w.End || first.CancelledAt != w.CancelledAt {
			return nil, fmt.Errorf("booking %d: its windows disagree (%s [%d, %d) and %s [%d, %d))", w.ID, first.Account, first.Start, first.End, w.Account, w.Start, w.End)
		}
		for _, u := range us {
			if slices.ContainsFunc(bcs[i].Charges, func(o meter.Usage) bool { return meter.BookingKeyOf(o) == meter.BookingKeyOf(u) }) {
				return nil, fmt.Errorf("booking %d: type %s twice", w.ID, u.Type)
			}
		}
		bcs[i].Charges = append(bcs[i].Charges, us...)
	}
	return bcs, nil
}
