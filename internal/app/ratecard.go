package app

import (
	"context"
	"strconv"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
)

// The rate card's use cases on gpubridge's database. The admin's mistakes
// about the card (ratecard.IsInput) are input errors.

// cardInput marks the admin's mistakes about the rate card as input
// errors.
func cardInput(err error) error {
	if ratecard.IsInput(err) {
		return Input(err)
	}
	return err
}

// RateCard is the current rate card (ratecard.ErrNoCard when there is
// none).
func (e *Env) RateCard(ctx context.Context) (pricing.Card, error) {
	st, err := e.RateCards(ctx)
	if err != nil {
		return pricing.Card{}, err
	}
	return ratecard.Get(ctx, st)
}

// LoadRateCard replaces the rate card with the file at path (YAML or
// JSON), after confirm; changed is false when the file holds the current
// card.
func (e *Env) LoadRateCard(ctx context.Context, path string, confirm func(pricing.Card) error) (card pricing.Card, changed bool, err error) {
	b, err := ratecard.ReadFile(path)
	if err != nil {
		return card, false, cardInput(err)
	}
	st, err := e.RateCards(ctx)
	if err != nil {
		return card, false, err
	}
	card, changed, err = ratecard.Load(ctx, st, b, Actor(), time.Now(), confirm)
	return card, changed, cardInput(err)
}

// ParseRate reads add rate's keys: type=, price=, from= (required) and
// tier=; currency= is the caller's (only the first rate needs it).
func ParseRate(w map[string]string) (pricing.Rate, error) {
	if w["type"] == "" || w["price"] == "" || w["from"] == "" {
		return pricing.Rate{}, Inputf("add rate needs type=, price= and from=")
	}
	r := pricing.Rate{Type: w["type"], Tier: meter.Tier(w["tier"])}
	var err error
	if r.PerGPUHour, err = pricing.ParsePrice(w["price"]); err != nil {
		return r, Inputf("%v", err)
	}
	if r.From, err = pricing.ParseDate(w["from"]); err != nil {
		return r, Inputf("%v", err)
	}
	return r, nil
}

// AddRate adds (or replaces) the rate that add rate's keys describe
// (ParseRate); the first rate creates the card in currency=. It returns
// the rate and the card as saved.
func (e *Env) AddRate(ctx context.Context, where map[string]string) (pricing.Rate, pricing.Card, error) {
	r, err := ParseRate(where)
	if err != nil {
		return r, pricing.Card{}, err
	}
	st, err := e.RateCards(ctx)
	if err != nil {
		return r, pricing.Card{}, err
	}
	next, err := ratecard.AddRate(ctx, st, r, where["currency"], Actor(), time.Now())
	return r, next, cardInput(err)
}

// RateKey names one rate of the card: its type, tier and first day.
type RateKey struct {
	Type string
	Tier meter.Tier
	From pricing.Date
}

// ParseRateKey reads delete rate's keys: type=, from=YYYY-MM-DD and tier=.
func ParseRateKey(w map[string]string) (RateKey, error) {
	from, err := pricing.ParseDate(w["from"])
	if err != nil || w["type"] == "" {
		return RateKey{}, Inputf("delete rate needs type= and from=YYYY-MM-DD")
	}
	return RateKey{Type: w["type"], Tier: meter.Tier(w["tier"]), From: from}, nil
}

// DeleteRate removes the rate that delete rate's keys name
// (ParseRateKey), after confirm (nil: no question).
func (e *Env) DeleteRate(ctx context.Context, where map[string]string, confirm func(RateKey) error) error {
	k, err := ParseRateKey(where)
	if err != nil {
		return err
	}
	st, err := e.RateCards(ctx)
	if err != nil {
		return err
	}
	var ask func() error
	if confirm != nil {
		ask = func() error { return confirm(k) }
	}
	return cardInput(ratecard.DeleteRate(ctx, st, k.Type, k.Tier, k.From, Actor(), time.Now(), ask))
}

// ParseGPUType reads add gputype's keys: name=, parent= (required),
// slices= and parentslices=.
func ParseGPUType(w map[string]string) (pricing.GPUType, error) {
	t := pricing.GPUType{Name: w["name"], Parent: w["parent"]}
	if t.Name == "" || t.Parent == "" {
		return t, Inputf("add gputype needs name= and parent=")
	}
	for k, dst := range map[string]*int{"slices": &t.Slices, "parentslices": &t.ParentSlices} {
		if v, ok := w[k]; ok {
			var err error
			if *dst, err = strconv.Atoi(v); err != nil {
				return t, Inputf("%s=%s: want a number", k, v)
			}
		}
	}
	return t, nil
}

// AddGPUType declares the MIG profile and parent that add gputype's keys
// name (ParseGPUType) on the card, and returns it.
func (e *Env) AddGPUType(ctx context.Context, where map[string]string) (pricing.GPUType, error) {
	t, err := ParseGPUType(where)
	if err != nil {
		return t, err
	}
	st, err := e.RateCards(ctx)
	if err != nil {
		return t, err
	}
	_, err = ratecard.AddGPUType(ctx, st, t, Actor(), time.Now())
	return t, cardInput(err)
}
