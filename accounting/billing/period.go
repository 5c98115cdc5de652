package billing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
)

// LedgerReader is what reports read of the ledger (ledger.DB, ledger.Memory).
type LedgerReader interface {
	Period(ctx context.Context, cluster string, p meter.Period) (rec ledger.PeriodRecord, ok bool, err error)
	Lines(ctx context.Context, cluster string, q ledger.LineQuery, fn func(meter.Line) error) error
	// SummaryLines and ExportLines are the exports' faster reads of Lines
	// (ledger/exportread.go).
	SummaryLines(ctx context.Context, cluster string, q ledger.LineQuery, fn func(meter.Line) error) error
	ExportLines(ctx context.Context, cluster string, q ledger.LineQuery, fn func(meter.Line) error) error
	Charges(ctx context.Context, cluster string, q ledger.LineQuery, fn func(meter.Line) error) error
	Accruals(ctx context.Context, cluster string, q ledger.LineQuery, fn func(meter.Line) error) error
	Credits(ctx context.Context, cluster string, q ledger.CreditQuery, fn func(ledger.Credit) error) error
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
	// Parties name the site in the FOCUS export (config chargeback.*).
	Parties export.Parties
	// Clock stamps an open period's FOCUS metadata (CreationDate);
	// default time.Now. A closed period's is its close time.
	Clock func() time.Time
}

// View returns what reports need of period p: its meta (the card and
// labels stored at close for a closed period; the current ones, or an
// empty card, for an open one) and its lines: the usage lines, the
// booking charges, and while open the accruals of running jobs. account, when not empty, keeps one account's lines.
func (b Books) View(ctx context.Context, p meter.Period, account string) (export.Meta, export.Lines, error) {
	clock := b.Clock
	if clock == nil {
		clock = time.Now
	}
	m := export.Meta{Cluster: b.Cluster, Period: p, Parties: b.Parties, Now: clock()}
	rec, closed, err := b.Ledger.Period(ctx, b.Cluster, p)
	if err != nil {
		return m, nil, err
	}
	if m.Card, err = CardFor(ctx, b.Cards, rec, closed); err != nil {
		return m, nil, err
	}
	if closed {
		m.Closed, m.ClosedAt, m.Tenants = true, rec.ClosedAt, ledger.Labels(rec.Snapshot.Tenants)
		m.Profiles = snapshotProfiles(rec.Snapshot.Profiles) // as at close
	} else if b.Labels != nil {
		if m.Tenants, err = b.Labels(ctx); err != nil {
			return m, nil, err
		}
		if pf, ok := m.Tenants.(export.Profiler); ok { // the tenants' current profiles
			m.Profiles = pf
		}
	}
	if m.Credits, err = b.credits(ctx, p, account); err != nil {
		return m, nil, err
	}
	lines := func(ctx context.Context, ordered bool, fn func(meter.Line) error) error {
		q := ledger.LineQuery{Booked: p, Account: account, Ordered: ordered}
		read := b.Ledger.ExportLines
		if !ordered { // the summary's pass (export.Lines)
			read = b.Ledger.SummaryLines
		}
		if err := read(ctx, b.Cluster, q, fn); err != nil {
			return err
		}
		if err := b.Ledger.Charges(ctx, b.Cluster, q, fn); err != nil {
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

// ExportRequest asks for one period's chargeback.
type ExportRequest struct {
	Period meter.Period
	// Account, when not empty, keeps one account's lines.
	Account string
	Options export.Options
	// Path is the file to write (replaced only once complete:
	// export.WriteFile); empty writes to the Export's writer.
	Path string
	// MetadataPath is where the FOCUS metadata goes (format=focus only);
	// empty is Path + export.MetadataSuffix when Path is set, else none.
	MetadataPath string
}

// ErrMetadataFormat refuses metadata for an export that is not FOCUS.
var ErrMetadataFormat = errors.New("metadata is published with format=focus only")

// Export writes the chargeback of r.Period to r.Path or, when it is empty,
// to w; a FOCUS export written to a file gets its metadata beside it
// (after the data: a failure leaves the new data with the previous
// metadata, and the error says so).
func (b Books) Export(ctx context.Context, r ExportRequest, w io.Writer) error {
	mdPath := r.MetadataPath
	if r.Options.Format != export.FOCUS {
		if mdPath != "" {
			return fmt.Errorf("export chargeback %s: %w", r.Period, ErrMetadataFormat)
		}
	} else if mdPath == "" && r.Path != "" {
		mdPath = r.Path + export.MetadataSuffix
	}
	m, lines, err := b.View(ctx, r.Period, r.Account)
	if err == nil {
		if r.Path != "" {
			err = export.WriteFile(ctx, r.Path, m, lines, r.Options)
		} else {
			err = export.Write(ctx, w, m, lines, r.Options)
		}
	}
	if err == nil && mdPath != "" {
		if err = export.WriteMetadataFile(ctx, mdPath, m); err != nil {
			err = fmt.Errorf("the data is written, its metadata is not: %w", err)
		}
	}
	if err != nil {
		return fmt.Errorf("export chargeback %s: %w", r.Period, err)
	}
	return nil
}
