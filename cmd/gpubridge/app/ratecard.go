package app

import (
	"cmp"
	"context"
	"strconv"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/internal/table"
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

// RateCardAt is the rate card as of a time: what show rates and show
// ratecard print.
type RateCardAt struct {
	Card pricing.Card
	At   time.Time
}

// Table is show rates: the card's rates, and the MIG profiles priced from
// their parent, as of At.
func (c RateCardAt) Table() table.Table { return ratecard.Table(c.Card, c.At) }

// Printout is show ratecard for the output options o: the card (--json)
// or its rates table (ratecard.Views), else the card as YAML with its
// FOCUS price list (ratecard.Document).
func (c RateCardAt) Printout(o table.Options) Printout {
	if ts, note := ratecard.Views(c.Card, c.At, o); ts != nil {
		return Tables(ts, note)
	}
	doc, err := ratecard.Document(c.Card)
	return Printout{Err: err}.Text(doc)
}

// RateCard is the current rate card as of now (ratecard.ErrNoCard when
// there is none).
func (e *Env) RateCard(ctx context.Context) (RateCardAt, error) {
	st, err := e.RateCards(ctx)
	if err != nil {
		return RateCardAt{}, err
	}
	card, err := ratecard.Get(ctx, st)
	return RateCardAt{Card: card, At: time.Now()}, err
}

// LoadedCard is what load ratecard did: the card, and whether it differs
// from the one it replaced.
type LoadedCard struct {
	Card    pricing.Card
	Changed bool
}

// Text is what load ratecard says (ratecard.Loaded).
func (l LoadedCard) Text() string { return ratecard.Loaded(l.Card, l.Changed) }

// ParseLoadRateCard reads load ratecard's file: -f (flag) or file=
// (ParseFileArg); one is required.
func ParseLoadRateCard(flag string, where map[string]string) (string, error) {
	path, err := ParseFileArg(flag, where)
	if err != nil || path == "" {
		return "", cmp.Or(err, Inputf("load ratecard needs -f FILE"))
	}
	return path, nil
}

// LoadRateCard replaces the rate card with the file (YAML or JSON) at
// path, after confirm (nil: no question) of ratecard.LoadPrompt; Changed
// is false when the file holds the current card.
func (e *Env) LoadRateCard(ctx context.Context, path string, confirm func(string) error) (LoadedCard, error) {
	b, err := ratecard.ReadFile(path)
	if err != nil {
		return LoadedCard{}, cardInput(err)
	}
	st, err := e.RateCards(ctx)
	if err != nil {
		return LoadedCard{}, err
	}
	var ask func(pricing.Card) error
	if confirm != nil {
		ask = func(c pricing.Card) error { return confirm(ratecard.LoadPrompt(c)) }
	}
	card, changed, err := ratecard.Load(ctx, st, b, Actor(), time.Now(), ask)
	return LoadedCard{Card: card, Changed: changed}, cardInput(err)
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

// AddedRate is what add rate saved: the rate, and the card it is on.
type AddedRate struct {
	Rate pricing.Rate
	Card pricing.Card
}

// Text is what add rate says (ratecard.RateAdded).
func (r AddedRate) Text() string { return ratecard.RateAdded(r.Rate, r.Card.Currency) }

// AddRateRequest is add rate: the rate, and the currency of the card the
// first rate creates.
type AddRateRequest struct {
	Rate     pricing.Rate
	Currency string
}

// ParseAddRate reads add rate's keys (ParseRate, and currency=).
func ParseAddRate(where map[string]string) (AddRateRequest, error) {
	r, err := ParseRate(where)
	return AddRateRequest{Rate: r, Currency: where["currency"]}, err
}

// AddRate adds (or replaces) the rate r describes; the first rate creates
// the card in r.Currency. It returns the rate and the card as saved.
func (e *Env) AddRate(ctx context.Context, r AddRateRequest) (AddedRate, error) {
	st, err := e.RateCards(ctx)
	if err != nil {
		return AddedRate{Rate: r.Rate}, err
	}
	next, err := ratecard.AddRate(ctx, st, r.Rate, r.Currency, Actor(), time.Now())
	return AddedRate{Rate: r.Rate, Card: next}, cardInput(err)
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

// Removed is what delete rate says once k is removed.
func (k RateKey) Removed() string { return ratecard.Removed }

// DeleteRate removes the rate k names (ParseRateKey reads delete rate's
// keys), after confirm (nil: no question) of ratecard.DeletePrompt, and
// returns its key.
func (e *Env) DeleteRate(ctx context.Context, k RateKey, confirm func(string) error) (RateKey, error) {
	st, err := e.RateCards(ctx)
	if err != nil {
		return k, err
	}
	var ask func() error
	if confirm != nil {
		ask = func() error { return confirm(ratecard.DeletePrompt(k.Type, k.Tier, k.From)) }
	}
	return k, cardInput(ratecard.DeleteRate(ctx, st, k.Type, k.Tier, k.From, Actor(), time.Now(), ask))
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

// AddGPUType declares the MIG profile and parent t (ParseGPUType reads
// add gputype's keys) on the card, and returns it.
func (e *Env) AddGPUType(ctx context.Context, t pricing.GPUType) (pricing.GPUType, error) {
	st, err := e.RateCards(ctx)
	if err != nil {
		return t, err
	}
	_, err = ratecard.AddGPUType(ctx, st, t, Actor(), time.Now())
	return t, cardInput(err)
}
