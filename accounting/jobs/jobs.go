package jobs

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
)

// Ingest runs the ingester's scheduled ingest per Run (ingest.Ingester.
// Scheduled): from the watermark minus the lookback to now, looking up the
// runs that were running at the last ingest; every hour with a changes
// pass (rows slurmdbd changed, by mod_time), every day a verification of
// the open periods.
type Ingest struct {
	Ingester *ingest.Ingester
}

// Name implements the daemon's Job.
func (j *Ingest) Name() string { return "ingest" }

// Run ingests new and changed job records.
func (j *Ingest) Run(ctx context.Context) error {
	_, err := j.Ingester.Scheduled(ctx)
	return err
}

// ClosePeriod closes the period before the current one when it is still
// open, with the same steps as `gpubridge close` (billing.Closer): it
// re-reads that whole period and everything since (so records slurmdbd
// wrote late are in), then closes it with the current rate card and tenant
// labels. A period already closed is left alone. A missing rate fails the
// run with the list of types; the period stays open and the next run tries
// again.
type ClosePeriod struct {
	// Closer closes; its Reader re-reads before the close.
	Closer billing.Closer
	Clock  func() time.Time
	Actor  string
	Log    *slog.Logger
}

// Name implements the daemon's Job.
func (j *ClosePeriod) Name() string { return "close-period" }

// Run closes the previous period if needed.
func (j *ClosePeriod) Run(ctx context.Context) error {
	now := time.Now
	if j.Clock != nil {
		now = j.Clock
	}
	log := j.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	actor := j.Actor
	if actor == "" {
		actor = "gpubridge serve"
	}
	c := j.Closer
	if c.Clock == nil {
		c.Clock = now
	}
	p := meter.PeriodOf(now()).Prev()
	rec, err := c.Close(ctx, billing.CloseOptions{Period: p, Actor: actor, Reread: true})
	if errors.Is(err, ledger.ErrAlreadyClosed) {
		log.Debug("period already closed", "period", p)
		return nil
	}
	if err != nil {
		var mre *pricing.MissingRatesError
		if errors.As(err, &mre) {
			log.Error("period cannot be closed: GPU types without a rate", "period", p, "err", err)
		}
		return err
	}
	log.Info("period closed", "period", p, "lines", rec.Lines, "gpuSeconds", rec.GPUSeconds,
		"amount", rec.Amount.String(), "currency", rec.Currency)
	return nil
}

// BookingCharges writes the bookings' charges to the ledger per Run
// (billing.BookingCharger: what the ledger lacks; a re-run adds nothing).
type BookingCharges struct {
	Charger *billing.BookingCharger
	Log     *slog.Logger
}

// Name implements the daemon's Job.
func (j *BookingCharges) Name() string { return "booking-charges" }

// Run charges every booking.
func (j *BookingCharges) Run(ctx context.Context) error {
	res, err := j.Charger.Charge(ctx)
	if j.Log != nil && res.Lines > 0 {
		j.Log.Info("booking charges written", "bookings", res.Bookings, "lines", res.Lines, "corrections", res.Corrections)
	}
	return err
}
