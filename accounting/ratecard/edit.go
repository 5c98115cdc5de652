package ratecard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
)

// InputError is a mistake in what was asked (not a failure of the store).
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

func inputf(format string, a ...any) error { return InputError{fmt.Errorf(format, a...)} }

// IsInput reports whether err is the user's mistake: an InputError or an
// invalid card (pricing.ValidationError).
func IsInput(err error) bool {
	var ie InputError
	var ve pricing.ValidationError
	return errors.As(err, &ie) || errors.As(err, &ve)
}

// Get returns the current card, or ErrNoCard with how to make one.
func Get(ctx context.Context, st Store) (pricing.Card, error) {
	c, ok, err := st.Current(ctx)
	if err != nil {
		return c, err
	}
	if !ok {
		return c, fmt.Errorf("%w: load one (gpubridge load ratecard file=...) or add rates (gpubridge add rate ...)", ErrNoCard)
	}
	return c, nil
}

// ReadFile reads a rate card file, refusing one larger than
// pricing.MaxCardBytes without reading it all.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, pricing.MaxCardBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > pricing.MaxCardBytes {
		return nil, inputf("%s is larger than %d bytes (1 MiB): a rate card is a few kilobytes; is it the right file?", path, pricing.MaxCardBytes)
	}
	return b, nil
}

// Load replaces the current card with the card in b (YAML or JSON), after
// confirm (nil: no question). It reports changed false, and saves nothing,
// when b is the current card.
func Load(ctx context.Context, st Store, b []byte, actor string, at time.Time, confirm func(pricing.Card) error) (card pricing.Card, changed bool, err error) {
	card, err = pricing.ParseYAML(b)
	if err != nil {
		return card, false, err
	}
	old, had, err := st.Current(ctx)
	if err != nil {
		return card, false, err
	}
	if had {
		oy, _ := old.YAML()
		ny, _ := card.YAML()
		if string(oy) == string(ny) {
			return card, false, nil
		}
	}
	if confirm != nil {
		if err := confirm(card); err != nil {
			return card, false, err
		}
	}
	if err := st.Save(ctx, card, actor, at); err != nil {
		return card, false, err
	}
	return card, true, nil
}

// AddRate adds r to the current card, replacing a rate of the same type,
// tier and date. The first rate creates the card and needs its currency;
// later ones may repeat the card's currency but not change it.
func AddRate(ctx context.Context, st Store, r pricing.Rate, currency, actor string, at time.Time) (pricing.Card, error) {
	card, had, err := st.Current(ctx)
	if err != nil {
		return card, err
	}
	if !had {
		if currency == "" {
			return card, inputf("there is no rate card yet: give currency= (e.g. currency=EUR) with the first rate")
		}
		card = pricing.Card{Version: pricing.CurrentVersion, Currency: currency}
	} else if currency != "" && currency != card.Currency {
		return card, inputf("currency=%s: the rate card is in %s (load a new card to change currency)", currency, card.Currency)
	}
	next, err := card.WithRate(r)
	if err != nil {
		return card, err
	}
	return next, st.Save(ctx, next, actor, at)
}

// DeleteRate removes the rate of typ, tier and from, after confirm (nil:
// no question).
func DeleteRate(ctx context.Context, st Store, typ string, tier meter.Tier, from pricing.Date, actor string, at time.Time, confirm func() error) error {
	card, had, err := st.Current(ctx)
	if err != nil {
		return err
	}
	if !had {
		return ErrNoCard
	}
	next, found := card.WithoutRate(typ, tier, from)
	if !found {
		return fmt.Errorf("no rate for type %s, tier %q from %s", typ, tier, from)
	}
	if confirm != nil {
		if err := confirm(); err != nil {
			return err
		}
	}
	return st.Save(ctx, next, actor, at)
}

// AddGPUType declares t (a MIG profile and its parent) on the current card.
func AddGPUType(ctx context.Context, st Store, t pricing.GPUType, actor string, at time.Time) (pricing.Card, error) {
	card, had, err := st.Current(ctx)
	if err != nil {
		return card, err
	}
	if !had {
		return card, fmt.Errorf("%w: add a rate with currency= first", ErrNoCard)
	}
	next, err := card.WithType(t)
	if err != nil {
		return card, err
	}
	return next, st.Save(ctx, next, actor, at)
}

// Row is one line of the rates listing. SkuPriceID is the FOCUS
// SkuPriceId the rate prices (both tiers' for a rate of both tiers).
type Row struct {
	Type, Tier, PerGPUHour, Currency, From, Basis, SkuPriceID string
}

// Rows lists card's own rates, then each MIG profile priced from its
// parent with the rate that applies at now, per tier; a profile whose
// parent has no rate then says so.
func Rows(card pricing.Card, now time.Time) []Row {
	var out []Row
	for _, r := range card.Rates {
		tier, ids := string(r.Tier), pricing.SkuPriceID(r.Type, r.Tier)
		if tier == "" {
			tier, ids = "*", pricing.SkuPriceID(r.Type, meter.Reserved)+","+pricing.SkuPriceID(r.Type, meter.OnDemand)
		}
		out = append(out, Row{r.Type, tier, r.PerGPUHour.String(), card.Currency, r.From.String(), "own rate", ids})
	}
	for _, ty := range card.Types {
		if ty.Parent == "" {
			continue
		}
		for _, tier := range meter.AllTiers {
			q, err := card.Quote(ty.Name, tier, now.Unix())
			if err != nil && tier == meter.Booked {
				continue // bookings of the profile are not priced: nothing to list
			}
			if err != nil {
				out = append(out, Row{ty.Name, string(tier), "no rate", card.Currency, "", "parent " + ty.Parent + " has no rate today", ""})
				continue
			}
			if q.Basis == ty.Name {
				continue // has its own rate, listed above
			}
			out = append(out, Row{ty.Name, string(tier), q.UnitPrice().String(), card.Currency, q.From.String(), q.Basis,
				pricing.SkuPriceID(ty.Name, tier)})
		}
	}
	return out
}

// PriceListComment is the card's FOCUS price list (pricing.Card.PriceList)
// as YAML comments, for `show ratecard`: each SkuPriceId with its SkuId
// and its price per GPU-hour from each date. A FOCUS row's ListUnitPrice is
// the price of its SkuPriceId on its x_RateFrom date. Being comments, it
// leaves the YAML as load ratecard reads it.
func PriceListComment(card pricing.Card) string {
	var b strings.Builder
	b.WriteString("# FOCUS price list: a row's ListUnitPrice is its SkuPriceId's price per GPU-hour (" + card.Currency + ")\n")
	b.WriteString("# on its x_RateFrom date.\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tSkuPriceId\tSkuId\tFrom\tPerGPUHour\tBasis")
	for _, p := range card.PriceList() {
		fmt.Fprintf(tw, "#\t%s\t%s\t%s\t%s\t%s\n", p.SkuPriceID, p.SkuID, p.From, p.UnitPrice, p.Basis)
	}
	tw.Flush()
	return b.String()
}
