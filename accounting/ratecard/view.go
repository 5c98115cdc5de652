package ratecard

import (
	"fmt"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/internal/table"
)

// The rate card commands' messages: what they ask before a change and say
// after it.

// LoadPrompt is what load ratecard asks before replacing the card with c.
func LoadPrompt(c pricing.Card) string {
	return fmt.Sprintf(" Replacing the rate card: %s, %d rates, %d GPU types.", c.Currency, len(c.Rates), len(c.Types))
}

// Loaded says the card loaded, or that it was the current one already.
func Loaded(c pricing.Card, changed bool) string {
	if !changed {
		return "rate card unchanged\n"
	}
	return fmt.Sprintf("rate card loaded: %s, %d rates, %d GPU types\n", c.Currency, len(c.Rates), len(c.Types))
}

// RateAdded says what rate r of a card in currency now prices.
func RateAdded(r pricing.Rate, currency string) string {
	tier := string(r.Tier)
	if tier == "" {
		tier = "reserved and ondemand"
	}
	return fmt.Sprintf("rate %s (%s): %s %s per GPU-hour from %s\n", r.Type, tier, r.PerGPUHour, currency, r.From)
}

// DeletePrompt is what delete rate asks before removing the rate of typ,
// tier and from.
func DeletePrompt(typ string, tier meter.Tier, from pricing.Date) string {
	return fmt.Sprintf(" Removing the rate of %s (tier %q) from %s.", typ, string(tier), from)
}

// Removed is what delete rate says once the rate is removed.
const Removed = "rate removed\n"

// GPUTypeAdded says how t is priced now.
func GPUTypeAdded(t pricing.GPUType) string {
	return fmt.Sprintf("GPU type %s: a MIG profile of %s\n", t.Name, t.Parent)
}

// Views are the tables show ratecard prints of card for the output
// options o: the card itself (--json), or its rates table with a note that
// says so (-P, -p, format=, where); none for the YAML Document.
func Views(card pricing.Card, now time.Time, o table.Options) (ts []table.Table, note string) {
	switch {
	case o.JSON:
		return []table.Table{{Raw: card}}, ""
	case o.Parsable || o.Format != nil || o.Where != nil:
		return []table.Table{Table(card, now)}, "show ratecard: the rates table (show rates); without -P, -p, format= and where the card as YAML"
	}
	return nil, ""
}

// Document is the card as show ratecard prints it: the YAML that load
// ratecard reads, followed by its FOCUS price list as comments.
func Document(card pricing.Card) (string, error) {
	y, err := card.YAML()
	if err != nil {
		return "", err
	}
	return string(y) + PriceListComment(card), nil
}
