package export

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/internal/money"
)

// referenceSummarize is Summarize as it was before it grouped lines and
// cached quotes: every line priced with Card.PriceLine and added to a
// map of full summary keys. The fast path must give the same summary.
func referenceSummarize(ctx context.Context, m Meta, lines Lines, allowMissing bool) (Summary, error) {
	var missing pricing.MissingTracker
	rows := map[Key]*Row{}
	zero := money.Zero(m.Card.Unit())
	s := Summary{Meta: m, Amount: zero}
	err := lines(ctx, false, func(l meter.Line) error {
		it, priced, err := referenceItem(m, &missing, l)
		if err != nil {
			return err
		}
		k := Key{Tenant: it.Tenant, Account: l.Account, Type: l.Type, Tier: l.Tier, Kind: l.Kind(), Usage: l.Period,
			Rate: it.Quote.UnitPrice(), Basis: it.Quote.Basis, From: it.Quote.From, Booking: l.Booking}
		if !priced {
			k.Rate, k.Basis, k.From = -1, "", pricing.Date{}
		}
		r, ok := rows[k]
		if !ok {
			r = &Row{Key: k, HasTenant: it.HasTenant, Amount: zero}
			rows[k] = r
		}
		r.GPUSeconds += l.GPUSeconds
		r.Lines++
		if !l.Charge {
			s.GPUSeconds += l.GPUSeconds
		}
		s.Lines++
		if r.Amount, err = r.Amount.Add(it.Amount); err != nil {
			return err
		}
		s.Amount, err = s.Amount.Add(it.Amount)
		return err
	})
	if err != nil {
		return s, fmt.Errorf("price %s: %w", m.Period, err)
	}
	if err := missing.Err(); err != nil && !allowMissing {
		return s, fmt.Errorf("price %s: %w", m.Period, err)
	}
	if err := s.addCredits(newPricer(m), rows); err != nil {
		return s, fmt.Errorf("price %s: %w", m.Period, err)
	}
	for _, r := range rows {
		s.Rows = append(s.Rows, *r)
	}
	sortRows(s.Rows)
	return s, nil
}

func referenceItem(m Meta, missing *pricing.MissingTracker, l meter.Line) (Item, bool, error) {
	it := Item{Line: l, Tenant: NoTenant}
	if m.Tenants != nil {
		if t, ok := m.Tenants.Tenant(l.Account); ok {
			it.Tenant, it.HasTenant = t, true
		}
	}
	q, a, err := m.Card.PriceLine(l)
	if errors.Is(err, pricing.ErrNoRate) {
		missing.Add(l.Type, l.Tier, l.GPUSeconds)
		return it, false, nil
	}
	if err != nil {
		return it, false, err
	}
	it.Quote, it.Amount = q, a
	return it, true, nil
}

// randomMeta is an open or closed month of a random card: rate changes on
// random days in and around the month (tier-specific and for both tiers),
// MIG profiles priced from their parent or at their own rate, a booked
// rate or none, in EUR, JPY or KWD; tenants for some accounts; credits.
func randomMeta(r *rand.Rand) Meta {
	p := per("2026-11")
	c := pricing.Card{Version: pricing.CurrentVersion, Currency: []string{"EUR", "JPY", "KWD"}[r.IntN(3)],
		Types: []pricing.GPUType{{Name: "1g.10gb", Parent: "h100"}, {Name: "3g.40gb", Parent: "h100"}}}
	seen := map[string]bool{}
	for range 2 + r.IntN(8) {
		rt := pricing.Rate{Type: []string{"h100", "h100", "3g.40gb", "gpu"}[r.IntN(4)],
			Tier: []meter.Tier{"", meter.Reserved, meter.OnDemand, meter.Booked}[r.IntN(4)]}
		rt.From = pricing.DateOf(time.Unix(p.StartUnix(), 0).AddDate(0, 0, r.IntN(45)-10))
		rt.PerGPUHour = pricing.Price(r.Int64N(9_999_999_999) + 1)
		if r.IntN(3) == 0 {
			rt.PerGPUHour = pricing.Price(r.Int64N(40) * 250_000_000)
		}
		if k := fmt.Sprint(rt.Type, rt.Tier, rt.From); !seen[k] {
			seen[k] = true
			c.Rates = append(c.Rates, rt)
		}
	}
	// Every type has a rate for both tiers from before the month, unless
	// the month is to miss one.
	if r.IntN(4) > 0 {
		for _, t := range []string{"h100", "gpu"} {
			c.Rates = append(c.Rates, pricing.Rate{Type: t, PerGPUHour: pricing.Price(r.Int64N(5_000_000_000)), From: pricing.DateOf(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))})
		}
	}
	m := Meta{Cluster: "testbed", Period: p, Card: c, Tenants: labels{"acme": "acme", "beta": "Beta Corp", "=cmd": "=cmd"}}
	if r.IntN(2) == 0 {
		m.Closed, m.ClosedAt = true, closedAt
	}
	for i := range r.IntN(4) {
		m.Credits = append(m.Credits, Credit{Key: fmt.Sprint("credit-", i), Kind: "node-fail", Account: randomAccount(r),
			Amount: money.New(-r.Int64N(100000), c.Unit()), Period: p - meter.Period(r.IntN(2)), JobID: uint32(i + 1)})
	}
	return m
}

func randomAccount(r *rand.Rand) string {
	return []string{"acme", "beta", "orphan", "=cmd", "m4syn0001", "m4syn0002"}[r.IntN(6)]
}

// randomLedger is n lines booked in m's period: usage of every type and
// tier (bursts are the ondemand tier), starting on any day of the month or
// at 0, with corrections (negative revisions, reversals to zero),
// adjustments tagged with an earlier period, accruals, use inside
// bookings and booking charges (some for an earlier period), and types
// the card may have no rate for.
func randomLedger(r *rand.Rand, m Meta, n int) []meter.Line {
	var ls []meter.Line
	for range n {
		l := meter.Line{Account: randomAccount(r), User: "alice", Booked: m.Period}
		l.Run = meter.RunKey{Cluster: "testbed", JobID: uint32(1 + r.IntN(n)), Submit: m.Period.StartUnix() - 60}
		l.Period, l.Final = m.Period, true
		l.Type = []string{"h100", "h100", "1g.10gb", "3g.40gb", "gpu", "a100"}[r.IntN(6)]
		l.Tier = []meter.Tier{meter.Reserved, meter.Reserved, meter.OnDemand, meter.Booked}[r.IntN(4)]
		l.Count = 1 + r.Int64N(8)
		l.Start = m.Period.StartUnix() + r.Int64N(m.Period.EndUnix()-m.Period.StartUnix())
		l.End = min(l.Start+r.Int64N(3*86400), m.Period.EndUnix())
		l.GPUSeconds = l.Count * (l.End - l.Start)
		switch r.IntN(12) {
		case 0: // a correction
			l.Revision = 1 + r.IntN(3)
			l.GPUSeconds = -r.Int64N(l.GPUSeconds + 1)
		case 1: // an adjustment for the previous month
			l.Period = m.Period - 1
			l.Start -= 30 * 86400
			l.End -= 30 * 86400
			l.Revision = 1
		case 2: // a reversal of a run measured as empty
			l.Start, l.End, l.Revision, l.GPUSeconds = 0, 0, 1, -r.Int64N(1e6)
		case 3: // still running
			if !m.Closed {
				l.Final = false
			}
		case 4: // a booking charge
			l.Charge, l.Tier, l.Booking = true, meter.Booked, 1+r.Int64N(3)
			l.Run = meter.RunKey{Cluster: "testbed"}
			if r.IntN(3) == 0 {
				l.Period = m.Period - 1
			}
		}
		if l.Tier == meter.Booked && !l.Charge {
			l.Booking = 1 + r.Int64N(3)
		}
		ls = append(ls, l)
	}
	return ls
}

// TestSummarizeEqualsLineByLine: on randomized ledgers and cards, the
// summary (rows, totals, and the error when rates are missing) is what
// pricing every line with Card.PriceLine and grouping by the full key
// gives, whatever order the lines come in.
func TestSummarizeEqualsLineByLine(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 1))
	ctx := context.Background()
	var rows, missing, credits int
	for i := range 400 {
		m := randomMeta(r)
		ls := randomLedger(r, m, 1+r.IntN(600))
		for _, allow := range []bool{false, true} {
			src := source(ls, uint64(i))
			want, werr := referenceSummarize(ctx, m, src, allow)
			got, err := Summarize(ctx, m, src, allow)
			if fmt.Sprint(err) != fmt.Sprint(werr) {
				t.Fatalf("case %d: error %v, line by line %v", i, err, werr)
			}
			if werr != nil {
				missing++
				continue
			}
			if !reflect.DeepEqual(got.Rows, want.Rows) || got.GPUSeconds != want.GPUSeconds || got.Amount != want.Amount || got.Lines != want.Lines {
				t.Fatalf("case %d: summary\n%+v\nline by line\n%+v", i, got, want)
			}
			rows += len(got.Rows)
			credits += len(m.Credits)
		}
	}
	if rows < 10000 || missing < 50 || credits < 100 {
		t.Fatalf("%d rows, %d refusals for missing rates, %d credits: the random ledgers miss cases", rows, missing, credits)
	}
}

// TestDetailEqualsLineByLine: the job line items carry the quote and
// amount Card.PriceLine gives each line, in the export order.
func TestDetailEqualsLineByLine(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 2))
	ctx := context.Background()
	items := 0
	for i := range 200 {
		m := randomMeta(r)
		ls := randomLedger(r, m, 1+r.IntN(400))
		if i%4 > 0 { // most cases export: keep only the lines that have a rate
			ls = slices.DeleteFunc(ls, func(l meter.Line) bool { _, _, err := m.Card.PriceLine(l); return err != nil })
		}
		src := source(ls, uint64(i))
		var want []Item
		var missing pricing.MissingTracker
		werr := src(ctx, true, func(l meter.Line) error {
			it, priced, err := referenceItem(m, &missing, l)
			if err == nil && !priced {
				err = missing.Err()
			}
			want = append(want, it)
			return err
		})
		var got []Item
		err := detail(ctx, m, src, func(it Item) error { got = append(got, it); return nil })
		if (err != nil) != (werr != nil) {
			t.Fatalf("case %d: error %v, line by line %v", i, err, werr)
		}
		if werr != nil {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: items differ", i)
		}
		items += len(got)
	}
	if items < 5000 {
		t.Fatalf("%d items: the random ledgers miss cases", items)
	}
}
