package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
)

// Reader re-reads Slurm's accounting before a close (*ingest.Ingester).
type Reader interface {
	Ingest(ctx context.Context, w ingest.Window) (ingest.Result, error)
}

// Closer closes billing periods of one cluster: `gpubridge close` and the
// daemon's close job both call Close.
type Closer struct {
	Cluster string
	Ledger  ledger.CloseStore
	Cards   CardReader
	Labels  LabelSource
	// Reader re-reads the period and everything since before the close;
	// needed only for CloseOptions.Reread.
	Reader Reader
	// Charger, when set, brings the booking charges up to date before the
	// close (after the re-read), so a booking changed or cancelled since
	// the last charge run is billed as it stands.
	Charger *BookingCharger
	// Clock gives now (default time.Now).
	Clock func() time.Time
}

// CloseOptions asks for one close.
type CloseOptions struct {
	Period meter.Period
	Actor  string
	// Reread re-reads the period and everything since first, so records
	// slurmdbd wrote late are in.
	Reread bool
	// Confirm, when set, is asked after the checks and before anything is
	// read or written; an error stops the close and is returned.
	Confirm func(summary string) error
	// OnReread, when set, is told what the re-read wrote.
	OnReread func(ingest.Result)
}

// Close closes a period: it refuses one that has not ended
// (ledger.ErrNotEnded), is closed already (ledger.ErrAlreadyClosed, with
// when and by whom) or has no rate card (ratecard.ErrNoCard); asks
// Confirm; re-reads when asked; and closes it with the current card and
// tenant labels (ledger.Close: coverage, every line priced, the snapshot
// stored).
func (c Closer) Close(ctx context.Context, o CloseOptions) (ledger.PeriodRecord, error) {
	now := time.Now
	if c.Clock != nil {
		now = c.Clock
	}
	p := o.Period
	if end := p.End(); now().Before(end) {
		return ledger.PeriodRecord{}, fmt.Errorf("%s: %w: it can be closed from %s", p, ledger.ErrNotEnded, end.Format(time.RFC3339))
	}
	if rec, closed, err := c.Ledger.Period(ctx, c.Cluster, p); err != nil {
		return ledger.PeriodRecord{}, err
	} else if closed {
		return rec, fmt.Errorf("%s is already closed (at %s by %s): %w", p, rec.ClosedAt.Format(time.RFC3339), rec.ClosedBy, ledger.ErrAlreadyClosed)
	}
	card, ok, err := c.Cards.Current(ctx)
	if err != nil {
		return ledger.PeriodRecord{}, err
	}
	if !ok {
		return ledger.PeriodRecord{}, fmt.Errorf("close %s: %w: load one first (gpubridge load ratecard file=...)", p, ratecard.ErrNoCard)
	}
	if o.Confirm != nil {
		if err := o.Confirm(fmt.Sprintf(" Closing period %s of cluster %s: its ledger becomes immutable.", p, c.Cluster)); err != nil {
			return ledger.PeriodRecord{}, err
		}
	}
	if o.Reread {
		if c.Reader == nil {
			return ledger.PeriodRecord{}, errors.New("close: a re-read was asked without a reader")
		}
		res, err := c.Reader.Ingest(ctx, ingest.Window{From: p.Start()})
		if err != nil {
			return ledger.PeriodRecord{}, fmt.Errorf("close %s: re-read before closing: %w", p, err)
		}
		if o.OnReread != nil {
			o.OnReread(res)
		}
	}
	if c.Charger != nil {
		if _, err := c.Charger.Charge(ctx); err != nil {
			return ledger.PeriodRecord{}, fmt.Errorf("close %s: %w", p, err)
		}
	}
	var labels ledger.Labeler
	if c.Labels != nil {
		if labels, err = c.Labels(ctx); err != nil {
			return ledger.PeriodRecord{}, fmt.Errorf("close %s: tenants: %w", p, err)
		}
	}
	return ledger.Close(ctx, c.Ledger, ledger.CloseRequest{Cluster: c.Cluster, Period: p, Now: now(), Actor: o.Actor, Card: card, Tenants: labels})
}
