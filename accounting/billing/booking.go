package billing

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
)

// BookingSource lists every booking of the cluster (cancelled and ended
// ones included) as the charge needs them. Uncharged names the bookings it
// cannot charge and why (a whole-node booking, whose GPUs it cannot count
// yet): they are reported, never charged at zero.
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
	res := ChargeResult{Bookings: len(windows) + len(uncharged), Uncharged: uncharged}
	bcs := make([]meter.BookingCharge, 0, len(windows))
	for _, w := range windows {
		us, err := meter.BookingCharges(c.Cluster, w, c.Policy)
		if err != nil {
			return res, fmt.Errorf("charge bookings: %w", err)
		}
		bcs = append(bcs, meter.BookingCharge{Booked: w, Charges: us})
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
