package pricing

import (
	"fmt"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/money"
)

// LinePricer prices ledger lines exactly as [Card.PriceLine] does, for
// exports that price hundreds of thousands of lines: it looks each quote
// up once per GPU type, tier and day instead of once per line, and
// resolves the card's currency once.
//
// A quote depends on a line only through its type, its tier, whether it
// is use inside a booking, and the day of [RateDate]: every rate takes
// effect at 00:00 UTC of its From day, so all instants of one UTC day see
// the same rates (a card holding a From that is not a midnight, which
// [Date] cannot hold, is looked up per instant instead). The amount is
// then computed from the line's own GPU-seconds, rounded once, like
// [Card.Amount]. TestLinePricerEqualsPriceLine holds the two to the same
// quotes, amounts and errors on randomized cards and lines.
//
// A LinePricer is not safe for concurrent use.
type LinePricer struct {
	card   Card
	unit   money.Currency
	byDay  bool
	ids    map[quoteKey]int
	quotes []quoteEntry
}

type quoteKey struct {
	typ    string
	tier   meter.Tier
	inside bool  // use inside a booking (tier booked, not a charge)
	at     int64 // the day's first second, or the instant (byDay false)
}

type quoteEntry struct {
	q      Quote
	err    error
	inside bool
}

// NewLinePricer returns a pricer for c.
func NewLinePricer(c Card) *LinePricer {
	p := &LinePricer{card: c, unit: c.Unit(), byDay: true, ids: map[quoteKey]int{}}
	for _, r := range c.Rates {
		if r.From.Unix()%secondsPerDay != 0 {
			p.byDay = false
		}
	}
	return p
}

const secondsPerDay = 86400

// Unit is the card's currency ([Card.Unit]).
func (p *LinePricer) Unit() money.Currency { return p.unit }

// Card is the card the pricer prices with.
func (p *LinePricer) Card() Card { return p.card }

// QuoteID returns the id of l's quote (see [LinePricer.Quote]) or the
// error [Card.PriceLine] gives for it (wrapping [ErrNoRate] for a missing
// rate). Lines with the same id have equal quotes; lines with different
// ids may too (the same rate on two days).
func (p *LinePricer) QuoteID(l meter.Line) (int, error) {
	if l.Charge && l.Tier != meter.Booked {
		return -1, fmt.Errorf("booking %d: a charge line of tier %s (want booked)", l.Booking, l.Tier)
	}
	at := RateDate(l)
	k := quoteKey{typ: l.Type, tier: l.Tier, inside: l.Tier == meter.Booked && !l.Charge, at: at}
	if p.byDay {
		k.at = floorDiv(at, secondsPerDay) * secondsPerDay
	}
	id, ok := p.ids[k]
	if !ok {
		e := quoteEntry{inside: k.inside}
		e.q, e.err = p.card.Quote(k.typ, k.tier, k.at)
		if k.inside {
			if e.err != nil {
				e.q = Quote{Type: k.typ, Tier: k.tier, Num: 1, Den: 1}
			}
			e.q.Basis, e.err = InsideBookingBasis, nil
		}
		id = len(p.quotes)
		p.quotes = append(p.quotes, e)
		p.ids[k] = id
	}
	return id, p.quotes[id].err
}

// Quote returns the quote of an id QuoteID returned without an error.
func (p *LinePricer) Quote(id int) Quote { return p.quotes[id].q }

// Amount prices l at its quote id, as [Card.PriceLine] does: 0 for use
// inside a booking, else its GPU-seconds at the quote, rounded once.
func (p *LinePricer) Amount(id int, l meter.Line) (money.Amount, error) {
	e := &p.quotes[id]
	if e.inside {
		return money.Zero(p.unit), nil
	}
	q := e.q
	if q.Den <= 0 || q.Num < 0 || q.PerHour < 0 {
		return money.Amount{}, fmt.Errorf("invalid quote %+v", q)
	}
	a, err := mulDivRound(l.GPUSeconds, uint64(q.PerHour), uint64(q.Num), uint64(3600*priceUnit)*uint64(q.Den), p.unit.Minor)
	if err != nil {
		return money.Amount{}, fmt.Errorf("price %d GPU-seconds of %s at %s: %w", l.GPUSeconds, q.Type, q.Basis, err)
	}
	return money.New(a, p.unit), nil
}

// PriceLine is [Card.PriceLine] of the pricer's card.
func (p *LinePricer) PriceLine(l meter.Line) (Quote, money.Amount, error) {
	id, err := p.QuoteID(l)
	if err != nil {
		return Quote{}, money.Amount{}, err
	}
	a, err := p.Amount(id, l)
	return p.quotes[id].q, a, err
}

// floorDiv is a / b rounded down (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
