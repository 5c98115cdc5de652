package billing

import (
	"context"
	"fmt"
	"io"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
)

// LedgerReader is what reports read of the ledger (ledger.DB, ledger.Memory).
type LedgerReader interface {
	Period(ctx context.Context, cluster string, p meter.Period) (rec ledger.PeriodRecord, ok bool, err error)
	Lines(ctx context.Context, cluster string, q ledger.LineQuery, fn func(meter.Line) error) error
	Accruals(ctx context.Context, cluster string, q ledger.LineQuery, fn func(meter.Line) error) error
}

// CardReader reads the current rate card (ratecard.DB, ratecard.Memory).
type CardReader interface {
	Current(ctx context.Context) (card pricing.Card, ok bool, err error)
}

// LabelSource returns the current account → tenant labels.
type LabelSource func(ctx context.Context) (ledger.Labeler, error)

// Books is where the period view reads from.
type Books struct {
	Cluster string
	Ledger  LedgerReader
	Cards   CardReader
	Labels  LabelSource
}

// View returns what reports need of period p: its meta (the card and
// labels stored at close for a closed period; the current ones, or an
// empty card, for an open one) and its lines (with the accruals of running
// jobs while open). account, when not empty, keeps one account's lines.
func (b Books) View(ctx context.Context, p meter.Period, account string) (export.Meta, export.Lines, error) {
	m := export.Meta{Cluster: b.Cluster, Period: p}
	rec, closed, err := b.Ledger.Period(ctx, b.Cluster, p)
	if err != nil {
		return m, nil, err
	}
	if closed {
		m.Closed, m.ClosedAt, m.Card, m.Tenants = true, rec.ClosedAt, rec.Snapshot.Card, ledger.Labels(rec.Snapshot.Tenants)
	} else {
		card, ok, err := b.Cards.Current(ctx)
		if err != nil {
			return m, nil, err
		}
		if !ok {
			card = pricing.Card{Version: pricing.CurrentVersion}
		}
		m.Card = card
		if b.Labels != nil {
			if m.Tenants, err = b.Labels(ctx); err != nil {
				return m, nil, err
			}
		}
	}
	lines := func(ctx context.Context, ordered bool, fn func(meter.Line) error) error {
		q := ledger.LineQuery{Booked: p, Account: account, Ordered: ordered}
		if err := b.Ledger.Lines(ctx, b.Cluster, q, fn); err != nil {
			return err
		}
		if closed {
			return nil
		}
		return b.Ledger.Accruals(ctx, b.Cluster, q, fn)
	}
	return m, lines, nil
}

// Summary prices period p for reports that allow unpriced lines (`show
// usage`: a type without a rate is shown as such, never priced at zero).
func (b Books) Summary(ctx context.Context, p meter.Period, account string) (export.Summary, error) {
	m, lines, err := b.View(ctx, p, account)
	if err != nil {
		return export.Summary{Meta: m}, err
	}
	return export.Summarize(ctx, m, lines, true)
}

// Export writes period p's chargeback to the file at path (replaced only
// once complete: export.WriteFile) or, when path is empty, to w.
func (b Books) Export(ctx context.Context, p meter.Period, account string, o export.Options, path string, w io.Writer) error {
	m, lines, err := b.View(ctx, p, account)
	if err == nil {
		if path != "" {
			err = export.WriteFile(ctx, path, m, lines, o)
		} else {
			err = export.Write(ctx, w, m, lines, o)
		}
	}
	if err != nil {
		return fmt.Errorf("export chargeback %s: %w", p, err)
	}
	return nil
}
