package ledgeradapter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/credit"
	"github.com/gpubridge/gpubridge/internal/money"
)

// The node health credits' adapters (bridge/health/credit's ports) over
// the books (accounting/billing, accounting/ledger): the
// ledger's charged runs with their end states as a credit.Source, and the
// ledger's credit lines as a credit.Ledger.

// HealthEvents reads gpubridge's health events (bridge/health/store).
type HealthEvents interface {
	Events(ctx context.Context, node string, since time.Time) ([]health.Event, error)
}

// CreditLedger is what the credit adapters need of the ledger (ledger.DB,
// ledger.Memory).
type CreditLedger interface {
	State(ctx context.Context, cluster string) (ledger.State, error)
	Period(ctx context.Context, cluster string, p meter.Period) (rec ledger.PeriodRecord, ok bool, err error)
	RunLines(ctx context.Context, cluster string, runs []meter.RunKey, fn func(meter.Line) error) error
	WriteCredits(ctx context.Context, cluster string, cs []ledger.Credit, now time.Time) ([]ledger.Credit, error)
}

var (
	_ CreditLedger = (*ledger.DB)(nil)
	_ CreditLedger = (*ledger.Memory)(nil)
)

// CreditSource is the credit job's credit.Source: the runs that ended
// other than COMPLETED (billing.RunEnds), each with what the ledger charged for
// it, the health events, and the bookings' placements (Booked), priced at
// the booked rate they were charged.
//
// A run's charge is the sum of its ledger lines (every revision and
// booked period), each priced like its period's bill: a closed period
// with the card stored at its close, an open one with the current card.
// A run is left out (credited by a later run of the job, within its
// lookback) while the ledger has not ingested its end, or while one of its
// lines has no rate: a partial charge is never credited.
type CreditSource struct {
	Cluster string
	Ledger  CreditLedger
	Cards   billing.CardReader
	Labels  billing.LabelSource
	Ends    billing.RunEnds
	Health  HealthEvents
	// Booked lists the bookings' placements (nil: no booking is credited).
	Booked BookedPlacements
}

var _ credit.Source = CreditSource{}

// EndedRuns implements credit.Source.
func (s CreditSource) EndedRuns(ctx context.Context, from, to time.Time) ([]credit.JobRun, error) {
	ends, err := s.Ends.AbnormalEnds(ctx, from, to)
	if err != nil || len(ends) == 0 {
		return nil, err
	}
	st, err := s.Ledger.State(ctx, s.Cluster)
	if err != nil {
		return nil, err
	}
	var keys []meter.RunKey
	byKey := map[meter.RunKey]billing.RunEnd{}
	for _, e := range ends {
		if e.Key.Cluster != s.Cluster || !st.Ingested(e.End) {
			continue // not ingested yet: its charge may be incomplete
		}
		keys = append(keys, e.Key)
		byKey[e.Key] = e
	}
	if len(keys) == 0 {
		return nil, nil
	}
	labels, err := s.labeler(ctx)
	if err != nil {
		return nil, err
	}
	card := s.cards(ctx)
	charged := map[meter.RunKey]money.Amount{}
	unpriced := map[meter.RunKey]bool{}
	err = s.Ledger.RunLines(ctx, s.Cluster, keys, func(l meter.Line) error {
		c, err := card(l.Booked)
		if err != nil {
			return err
		}
		_, a, err := c.PriceLine(l)
		if errors.Is(err, pricing.ErrNoRate) {
			unpriced[l.Run] = true
			return nil
		}
		if err != nil {
			return err
		}
		sum, err := charged[l.Run].Add(a)
		if err != nil {
			return fmt.Errorf("charge of run %s: %w", l.Run, err)
		}
		charged[l.Run] = sum
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("price the runs that ended abnormally: %w", err)
	}
	out := make([]credit.JobRun, 0, len(keys))
	for _, k := range keys {
		if unpriced[k] {
			continue
		}
		e := byKey[k]
		tenant, _ := labels.Tenant(e.Account)
		out = append(out, credit.JobRun{Cluster: k.Cluster, JobID: int64(k.JobID), Submit: time.Unix(k.Submit, 0).UTC(), Tenant: tenant,
			Account: e.Account, State: e.State, Nodes: e.Nodes, Start: time.Unix(e.Start, 0).UTC(), End: time.Unix(e.End, 0).UTC(),
			Charged: charged[k]})
	}
	return out, nil
}

// labeler reads the tenants' names of accounts (none without Labels).
func (s CreditSource) labeler(ctx context.Context) (ledger.Labeler, error) {
	if s.Labels == nil {
		return ledger.Labels{}, nil
	}
	return s.Labels(ctx)
}

// cards returns a reader of the card that prices each period's bill: a
// closed period's card stored at its close, an open one's the current
// card; each is read once.
func (s CreditSource) cards(ctx context.Context) func(meter.Period) (pricing.Card, error) {
	cards := map[meter.Period]pricing.Card{}
	return func(p meter.Period) (pricing.Card, error) {
		if c, ok := cards[p]; ok {
			return c, nil
		}
		c, err := billing.PeriodCard(ctx, s.Ledger, s.Cards, s.Cluster, p)
		if err != nil {
			return pricing.Card{}, err
		}
		cards[p] = c
		return c, nil
	}
}

// BookedPlacement is a booking's GPUs of one type on one node, as the
// credit job needs them: on a node where Slurm placed the booking's
// reservation, over the part of the window it is charged for that they
// were there.
type BookedPlacement struct {
	ID      int64
	Account string
	Node    string
	Type    string
	GPUs    int
	// Start, End: the part of the charged window on Node.
	Start, End time.Time
	// RateFrom is the charged window's start (the charge line's rate
	// date); zero: Start.
	RateFrom time.Time
	// Part numbers the booking's parts on Node, 0 for the first.
	Part int
}

// BookedPlacements lists the placements of the bookings whose charged
// window overlaps [from, to).
type BookedPlacements func(ctx context.Context, from, to time.Time) ([]BookedPlacement, error)

// Bookings implements credit.Source: the placements of the bookings (none
// without Booked), each priced as its charge is: per period, the booked
// rate at the charge line's rate date (the booking's start, or the
// period's start when it began before), with that period's card. The
// cards of the periods a placement spans are read here, so the credit's
// computation reads nothing.
func (s CreditSource) Bookings(ctx context.Context, from, to time.Time) ([]credit.Booking, error) {
	if s.Booked == nil {
		return nil, nil
	}
	ps, err := s.Booked(ctx, from, to)
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	labels, err := s.labeler(ctx)
	if err != nil {
		return nil, err
	}
	card := s.cards(ctx)
	out := make([]credit.Booking, 0, len(ps))
	for _, p := range ps {
		tenant, ok := labels.Tenant(p.Account)
		if !ok || p.GPUs <= 0 || !p.End.After(p.Start) {
			continue
		}
		cards := map[meter.Period]pricing.Card{}
		for per := meter.PeriodOf(p.Start); per.Start().Before(p.End); per = per.Next() {
			if cards[per], err = card(per); err != nil {
				return nil, err
			}
		}
		out = append(out, credit.Booking{ID: p.ID, Tenant: tenant, Account: p.Account, Node: p.Node, GPUType: p.Type, GPUs: p.GPUs, Start: p.Start, End: p.End,
			Part: p.Part, Price: bookedPrice(p, cards)})
	}
	return out, nil
}

// bookedPrice prices [from, to) of placement p (inside its window) with
// the cards of the periods it spans, one amount per period, rounded as
// the charge's line of that period is.
func bookedPrice(p BookedPlacement, cards map[meter.Period]pricing.Card) func(from, to time.Time) (money.Amount, error) {
	return func(from, to time.Time) (money.Amount, error) {
		var sum money.Amount
		first := true
		for a := from; a.Before(to); {
			per := meter.PeriodOf(a)
			b := per.Next().Start()
			if to.Before(b) {
				b = to
			}
			c, ok := cards[per]
			if !ok {
				return money.Amount{}, fmt.Errorf("booking %d: no card for %s", p.ID, per)
			}
			at, rateFrom := per.Start(), p.RateFrom
			if rateFrom.IsZero() {
				rateFrom = p.Start
			}
			if rateFrom.After(at) {
				at = rateFrom
			}
			q, err := c.Quote(p.Type, meter.Booked, at.Unix())
			if err != nil {
				return money.Amount{}, err
			}
			amt, err := c.Amount(q, int64(b.Sub(a)/time.Second)*int64(p.GPUs))
			if err != nil {
				return money.Amount{}, err
			}
			if first {
				sum, first = amt, false
			} else if sum, err = sum.Add(amt); err != nil {
				return money.Amount{}, err
			}
			a = b
		}
		if first {
			return money.Amount{}, fmt.Errorf("booking %d: an empty window", p.ID)
		}
		return sum, nil
	}
}

// Events implements credit.Source: every node's events since a time.
func (s CreditSource) Events(ctx context.Context, since time.Time) ([]health.Event, error) {
	if s.Health == nil {
		return nil, nil
	}
	return s.Health.Events(ctx, "", since)
}

// CreditWriter is the credit job's credit.Ledger: the ledger's credit
// lines of one cluster.
type CreditWriter struct {
	Cluster string
	Ledger  CreditLedger
	Now     func() time.Time // default time.Now
}

var _ credit.Ledger = CreditWriter{}

// WriteCredits implements credit.Ledger. A credit is booked in the period
// of its loss's end (the first open one from there).
func (w CreditWriter) WriteCredits(ctx context.Context, cs []credit.Credit) ([]credit.Credit, error) {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	in := make([]ledger.Credit, 0, len(cs))
	byKey := map[string]credit.Credit{}
	for _, c := range cs {
		account := c.Account
		if account == "" {
			account = c.Tenant // a tenant's Slurm account has its name
		}
		end := c.End
		if end.After(c.Start) {
			end = end.Add(-time.Second) // [start, end): the last second lost
		}
		lc := ledger.Credit{Key: c.Key, Kind: string(c.Kind), Tenant: c.Tenant, Account: account, Amount: c.Amount,
			Period: meter.PeriodOf(end), EventID: c.EventID, Node: c.Node, JobID: uint32(c.JobID), BookingID: c.BookingID,
			GPUSeconds: c.GPUSeconds, Reason: c.Reason, Start: unix(c.Start), End: unix(c.End)}
		if !c.Submit.IsZero() {
			lc.Submit = c.Submit.Unix()
		}
		in = append(in, lc)
		byKey[c.Key] = c
	}
	written, err := w.Ledger.WriteCredits(ctx, w.Cluster, in, now())
	if err != nil {
		return nil, err
	}
	out := make([]credit.Credit, 0, len(written))
	for _, lc := range written {
		out = append(out, byKey[lc.Key])
	}
	slices.SortFunc(out, func(a, b credit.Credit) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}
