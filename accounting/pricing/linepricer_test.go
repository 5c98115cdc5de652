package pricing

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/money"
)

// randomCard returns a valid card of a few types (MIG profiles with and
// without parents, with rates of their own or not), tiers and rate changes
// on random days around 2026, prices with up to 9 decimals, in a currency
// of 0, 2 or 3 minor digits.
func randomCard(r *rand.Rand) Card {
	c := Card{Version: CurrentVersion, Currency: []string{"EUR", "JPY", "KWD", "USD"}[r.IntN(4)]}
	c.Types = []GPUType{{Name: "1g.10gb", Parent: "h100"}, {Name: "3g.40gb", Parent: "h100"}, {Name: "a30-1g", Parent: "a30", Slices: 1, ParentSlices: 4}}
	if r.IntN(3) == 0 {
		c.Types = c.Types[:1]
	}
	tiers := []meter.Tier{"", meter.Reserved, meter.OnDemand, meter.Booked}
	seen := map[string]bool{}
	for range 1 + r.IntN(12) {
		rt := Rate{Type: []string{"h100", "a30", "3g.40gb", "gpu", "1g.10gb"}[r.IntN(5)], Tier: tiers[r.IntN(len(tiers))]}
		rt.From = DateOf(time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, r.IntN(120)))
		switch r.IntN(4) {
		case 0:
			rt.PerGPUHour = Price(r.Int64N(10) * priceUnit / 4)
		case 1:
			rt.PerGPUHour = Price(r.Int64N(int64(MaxPrice)))
		default:
			rt.PerGPUHour = Price(r.Int64N(50 * priceUnit))
		}
		k := fmt.Sprint(rt.Type, rt.Tier, rt.From)
		if seen[k] {
			continue
		}
		seen[k] = true
		c.Rates = append(c.Rates, rt)
	}
	return c
}

// randomLine is a line of a random type and tier starting at a random
// instant of the months around the card's dates (or at 0: priced at its
// period's start), with GPU-seconds that may be negative (a correction),
// 0, small, or large enough to need more than 64 bits on the way.
func randomLine(r *rand.Rand) meter.Line {
	l := meter.Line{}
	l.Type = []string{"h100", "a30", "3g.40gb", "gpu", "1g.10gb", "a30-1g", "7g.80gb"}[r.IntN(7)]
	l.Tier = []meter.Tier{meter.Reserved, meter.OnDemand, meter.Booked}[r.IntN(3)]
	l.Charge = l.Tier == meter.Booked && r.IntN(2) == 0 || r.IntN(50) == 0
	base := time.Date(2025, 11, 15, 0, 0, 0, 0, time.UTC).Unix()
	if r.IntN(10) > 0 {
		l.Start = base + r.Int64N(150*86400)
	}
	l.Period = meter.PeriodOfUnix(base + r.Int64N(150*86400))
	switch r.IntN(5) {
	case 0:
		l.GPUSeconds = -r.Int64N(1e7)
	case 1:
		l.GPUSeconds = r.Int64N(3)
	case 2:
		l.GPUSeconds = r.Int64N(1 << 62)
	default:
		l.GPUSeconds = r.Int64N(1e7)
	}
	l.Booking = r.Int64N(3)
	return l
}

func TestLinePricerEqualsPriceLine(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 2026))
	priced, missing, failed := 0, 0, 0
	for range 300 {
		card := randomCard(r)
		if err := card.Validate(); err != nil {
			t.Fatalf("random card does not validate: %v", err)
		}
		p := NewLinePricer(card)
		for range 400 {
			l := randomLine(r)
			wq, wa, werr := card.PriceLine(l)
			q, a, err := p.PriceLine(l)
			if fmt.Sprint(err) != fmt.Sprint(werr) {
				t.Fatalf("card %+v line %+v: error %v, PriceLine's %v", card, l, err, werr)
			}
			if q != wq || a != wa {
				t.Fatalf("card %+v line %+v: %+v %s, PriceLine's %+v %s", card, l, q, a, wq, wa)
			}
			switch {
			case werr == nil:
				priced++
			case isNoRate(werr):
				missing++
			default:
				failed++
			}
		}
	}
	// The cases the comparison must have met, each often.
	if priced < 10000 || missing < 1000 || failed < 100 {
		t.Fatalf("priced %d, missing a rate %d, other errors %d: the random lines miss cases", priced, missing, failed)
	}
}

func isNoRate(err error) bool { return errors.Is(err, ErrNoRate) }

// TestLinePricerDays: lines on both sides of a rate change at midnight
// get the rate in effect at their own instant, however many lines of the
// other day were priced before.
func TestLinePricerDays(t *testing.T) {
	card := Card{Version: CurrentVersion, Currency: "EUR", Rates: []Rate{
		{Type: "h100", PerGPUHour: 2 * priceUnit, From: mustDate("2026-01-01")},
		{Type: "h100", PerGPUHour: 3 * priceUnit, From: mustDate("2026-03-01")},
	}}
	p := NewLinePricer(card)
	change := mustDate("2026-03-01").Unix()
	for i, at := range []int64{change - 1, change, change - 86400, change + 86399, change - 1, change + 1} {
		l := meter.Line{Usage: meter.Usage{Type: "h100", Tier: meter.Reserved, Start: at, GPUSeconds: 3600}}
		l.Period = meter.PeriodOfUnix(at)
		q, a, err := p.PriceLine(l)
		if err != nil {
			t.Fatal(err)
		}
		want := money.New(200, money.Currency{Code: "EUR", Minor: 2})
		if at >= change {
			want = money.New(300, money.Currency{Code: "EUR", Minor: 2})
		}
		if a != want {
			t.Errorf("line %d at %s: %s (quote from %s), want %s", i, time.Unix(at, 0).UTC(), a, q.From, want)
		}
	}
}
