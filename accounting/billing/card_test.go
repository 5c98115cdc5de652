package billing

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

// cardsOf is a CardReader with a fixed answer.
type cardsOf struct {
	card pricing.Card
	ok   bool
	err  error
}

func (c cardsOf) Current(context.Context) (pricing.Card, bool, error) { return c.card, c.ok, c.err }

// periodsOf is a PeriodRecords of one closed period, or none.
type periodsOf struct {
	rec ledger.PeriodRecord
	ok  bool
	err error
}

func (p periodsOf) Period(context.Context, string, meter.Period) (ledger.PeriodRecord, bool, error) {
	return p.rec, p.ok, p.err
}

func TestPeriodCard(t *testing.T) {
	stored := pricing.Card{Version: pricing.CurrentVersion, Currency: "EUR"}
	current := pricing.Card{Version: pricing.CurrentVersion, Currency: "USD"}
	closedRec := ledger.PeriodRecord{Period: meter.Period(2026*12 + 10), ClosedAt: time.Unix(1764547200, 0), Snapshot: ledger.Snapshot{Card: stored}}
	errRead := errors.New("read failed")
	cases := map[string]struct {
		periods periodsOf
		cards   cardsOf
		want    pricing.Card
		wantErr error
	}{
		"closed: the card stored at close":    {periods: periodsOf{rec: closedRec, ok: true}, cards: cardsOf{card: current, ok: true}, want: stored},
		"closed: no current card needed":      {periods: periodsOf{rec: closedRec, ok: true}, cards: cardsOf{err: errRead}, want: stored},
		"open: the current card":              {cards: cardsOf{card: current, ok: true}, want: current},
		"open, no card loaded: an empty card": {cards: cardsOf{}, want: pricing.Card{Version: pricing.CurrentVersion}},
		"open: the card store's error":        {cards: cardsOf{err: errRead}, wantErr: errRead},
		"the ledger's error":                  {periods: periodsOf{err: errRead}, cards: cardsOf{card: current, ok: true}, wantErr: errRead},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := PeriodCard(context.Background(), tc.periods, tc.cards, "c", meter.Period(2026*12+10))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("card (-want +got):\n%s", d)
			}
		})
	}
}
