package spend

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/internal/money"
)

// Ledger is what the adapter reads of the usage ledger.
type Ledger interface {
	Lines(ctx context.Context, cluster string, q ledger.LineQuery, fn func(meter.Line) error) error
}

// Cards reads the current rate card (accounting/ratecard).
type Cards interface {
	Current(ctx context.Context) (card pricing.Card, ok bool, err error)
}

var (
	_ Ledger = (*ledger.DB)(nil)
	_ Cards  = (*ratecard.DB)(nil)
)

// Source reads spend and rates for one cluster. Spend is cached for TTL:
// the ledger only changes when an ingest runs (minutes apart), while the
// controller cycles every few seconds.
type Source struct {
	Ledger  Ledger
	Cards   Cards
	Cluster string
	// Accounts limits the spend read to these accounts (the tenants with
	// a budget); nil reads every account.
	Accounts func(ctx context.Context) ([]string, error)
	TTL      time.Duration

	mu      sync.Mutex
	cachedP meter.Period
	cachedT time.Time
	cached  map[string]int64
}

var (
	_ burst.SpendReader = (*Source)(nil)
	_ burst.RateReader  = (*Source)(nil)
)

// OnDemandRates returns the on-demand rate of every type the rate card
// prices (own rates and MIG profiles priced from their parent). No rate
// card yields no rates: tenants with a budget are then refused (no-rate).
func (s *Source) OnDemandRates(ctx context.Context, at time.Time) (burst.Rates, error) {
	card, ok, err := s.Cards.Current(ctx)
	if err != nil {
		return burst.Rates{}, err
	}
	if !ok {
		return burst.Rates{PerGPUHour: map[string]pricing.Price{}, Minor: 2}, nil
	}
	return RatesFrom(card, at), nil
}

// CardRates prices with a given rate card (a rate card file) instead of
// the stored one.
type CardRates struct{ Card pricing.Card }

var _ burst.RateReader = CardRates{}

// OnDemandRates implements burst.RateReader.
func (r CardRates) OnDemandRates(_ context.Context, at time.Time) (burst.Rates, error) {
	return RatesFrom(r.Card, at), nil
}

// RatesFrom lists card's on-demand rates at an instant, in billionths of
// the currency per GPU-hour (a MIG profile at its weighted rate).
func RatesFrom(card pricing.Card, at time.Time) burst.Rates {
	r := burst.Rates{PerGPUHour: map[string]pricing.Price{}, Currency: card.Currency, Minor: card.Minor()}
	types := map[string]bool{}
	for _, x := range card.Rates {
		types[x.Type] = true
	}
	for _, x := range card.Types {
		types[x.Name] = true
	}
	for t := range types {
		q, err := card.Quote(t, meter.OnDemand, at.Unix())
		if err != nil {
			continue // no on-demand rate at this time: stays missing
		}
		r.PerGPUHour[t] = q.UnitPrice()
	}
	return r
}

// OnDemandSpend returns each account's on-demand amount booked in the
// period holding from (minor units), priced with the current rate card.
func (s *Source) OnDemandSpend(ctx context.Context, from, to time.Time) (map[string]int64, error) {
	p := meter.PeriodOf(from)
	s.mu.Lock()
	if s.cached != nil && s.cachedP == p && time.Since(s.cachedT) < s.TTL {
		c := s.cached
		s.mu.Unlock()
		return c, nil
	}
	s.mu.Unlock()

	card, ok, err := s.Cards.Current(ctx)
	if err != nil {
		return nil, err
	}
	var accounts []string
	if s.Accounts != nil {
		if accounts, err = s.Accounts(ctx); err != nil {
			return nil, err
		}
		if len(accounts) == 0 {
			return map[string]int64{}, nil
		}
	}
	secs, err := s.onDemandSeconds(ctx, p, accounts)
	if err != nil {
		return nil, err
	}
	out, err := priceSpend(card, ok, secs)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cached, s.cachedP, s.cachedT = out, p, time.Now()
	s.mu.Unlock()
	return out, nil
}

// spendKey is the on-demand use of one account, GPU type and day (the
// day a rate applies from).
type spendKey struct {
	account, typ string
	day          int64
}

// onDemandSeconds sums the on-demand GPU-seconds booked in period p, of
// the accounts named (every account when nil), by account, type and day.
func (s *Source) onDemandSeconds(ctx context.Context, p meter.Period, accounts []string) (map[spendKey]int64, error) {
	secs := map[spendKey]int64{}
	collect := func(l meter.Line) error {
		if l.Tier != meter.OnDemand {
			return nil
		}
		day := pricing.DateOf(time.Unix(l.Start, 0)).Unix()
		secs[spendKey{l.Account, l.Type, day}] += l.GPUSeconds
		return nil
	}
	queries := []ledger.LineQuery{{Booked: p}}
	if accounts != nil {
		queries = queries[:0]
		for _, a := range accounts {
			queries = append(queries, ledger.LineQuery{Booked: p, Account: a})
		}
	}
	for _, q := range queries {
		if err := s.Ledger.Lines(ctx, s.Cluster, q, collect); err != nil {
			return nil, fmt.Errorf("read on-demand ledger lines of %s: %w", p, err)
		}
	}
	return secs, nil
}

// priceSpend prices the GPU-seconds with the rate card (hasCard: there is
// one) and counts each account's spend in money.Amount, returned in minor
// units of the card's currency. Use that cannot be priced is an error.
func priceSpend(card pricing.Card, hasCard bool, secs map[spendKey]int64) (map[string]int64, error) {
	sums := map[string]money.Amount{}
	var errs []error
	for k, gs := range secs {
		if gs == 0 {
			continue
		}
		if !hasCard {
			errs = append(errs, fmt.Errorf("%w: on-demand use of %s cannot be priced", ratecard.ErrNoCard, k.account))
			continue
		}
		q, err := card.Quote(k.typ, meter.OnDemand, k.day)
		if err != nil {
			errs = append(errs, fmt.Errorf("price on-demand use of %s: %w", k.account, err))
			continue
		}
		a, err := card.Amount(q, gs)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sum, err := sums[k.account].Add(a)
		if err != nil {
			errs = append(errs, fmt.Errorf("on-demand spend of %s: %w", k.account, err))
			continue
		}
		sums[k.account] = sum
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(sums))
	for a, sum := range sums {
		out[a] = sum.Units()
	}
	return out, nil
}
