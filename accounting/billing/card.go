package billing

import (
	"context"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
)

// PeriodRecords reads the ledger's record of a period (ledger.DB,
// ledger.Memory): ok is false while the period is open.
type PeriodRecords interface {
	Period(ctx context.Context, cluster string, p meter.Period) (rec ledger.PeriodRecord, ok bool, err error)
}

// CardFor is the one rule that picks the rate card a period's bill is
// priced with: a closed period's is the card stored at its close (rec,
// the ledger's record of it); an open one's is the current card, or an
// empty card of the current version (no rates) when none is loaded.
func CardFor(ctx context.Context, cards CardReader, rec ledger.PeriodRecord, closed bool) (pricing.Card, error) {
	if closed {
		return rec.Snapshot.Card, nil
	}
	card, ok, err := cards.Current(ctx)
	if err != nil {
		return pricing.Card{}, err
	}
	if !ok {
		card = pricing.Card{Version: pricing.CurrentVersion}
	}
	return card, nil
}

// PeriodCard reads period p's record and returns the card CardFor picks
// for it.
func PeriodCard(ctx context.Context, periods PeriodRecords, cards CardReader, cluster string, p meter.Period) (pricing.Card, error) {
	rec, closed, err := periods.Period(ctx, cluster, p)
	if err != nil {
		return pricing.Card{}, err
	}
	return CardFor(ctx, cards, rec, closed)
}
