package export

import (
	"fmt"
	"strconv"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/money"
)

// Credit is a credit line booked in the exported period (the ledger's
// credit lines, handed in through Meta.Credits): an amount of money given
// back for a loss node health recorded, not GPU-seconds to price. It is
// exported as it was written: a summary row of kind credit per tenant,
// account and loss period, a line item per credit with Detail, and in
// FOCUS a row with ChargeCategory Credit.
type Credit struct {
	Key     string
	Kind    string // node-fail, killed-by-drain, booking-lost
	Tenant  string // as the credit was written; the period's labels name the tenant shown
	Account string
	Amount  money.Amount // negative
	// Period is the loss's period; a credit for a closed period is booked
	// later and is a correction.
	Period     meter.Period
	EventID    int64
	Node       string
	JobID      uint32
	Submit     int64
	BookingID  int64
	GPUSeconds int64 // booked GPU-seconds lost (booking-lost); not use, not summed
	Start, End int64
	Reason     string
}

// creditItem is a credit with its tenant label.
type creditItem struct {
	Credit
	Tenant    string
	HasTenant bool
	Profile   Profile
}

// Description says what a credit is for (CSV rate_basis, FOCUS
// ChargeDescription, JSON description).
func (c Credit) Description() string {
	s := "credit (" + c.Kind + ")"
	switch {
	case c.JobID != 0:
		s += " for job " + strconv.FormatUint(uint64(c.JobID), 10)
	case c.BookingID != 0:
		s += " for booking " + strconv.FormatInt(c.BookingID, 10)
	}
	if c.Node != "" {
		s += " on " + c.Node
	}
	if c.EventID != 0 {
		s += ", health event " + strconv.FormatInt(c.EventID, 10)
	}
	if c.Reason != "" {
		s += ": " + c.Reason
	}
	return s
}

// credits labels the period's credits and checks their currency: a credit
// in another currency than the card's fails the export (it is never
// converted or dropped).
func (p *pricer) credits() ([]creditItem, error) {
	unit := p.meta.Card.Unit()
	out := make([]creditItem, 0, len(p.meta.Credits))
	for _, c := range p.meta.Credits {
		if c.Amount.Currency() != unit {
			return nil, fmt.Errorf("credit %q is in %s, the rate card in %s", c.Key, c.Amount.Currency(), unit)
		}
		lb := p.label(c.Account)
		it := creditItem{Credit: c, Tenant: lb.tenant, HasTenant: lb.hasTenant, Profile: lb.profile}
		out = append(out, it)
	}
	return out, nil
}

// creditKey is the summary row of a credit: no type, tier or rate.
func creditKey(it creditItem) Key {
	return Key{Tenant: it.Tenant, Account: it.Account, Kind: meter.KindCredit, Usage: it.Period, Rate: 0}
}

// addCredits adds the period's credits to the summary's rows and totals.
func (s *Summary) addCredits(p *pricer, rows map[Key]*Row) error {
	items, err := p.credits()
	if err != nil {
		return err
	}
	for _, it := range items {
		k := creditKey(it)
		r, ok := rows[k]
		if !ok {
			r = &Row{Key: k, HasTenant: it.HasTenant, Profile: it.Profile, Amount: money.Zero(p.meta.Card.Unit())}
			rows[k] = r
		}
		r.Lines++
		s.Lines++
		if r.Amount, err = r.Amount.Add(it.Amount); err != nil {
			return err
		}
		if s.Amount, err = s.Amount.Add(it.Amount); err != nil {
			return err
		}
	}
	return nil
}

// IsCredit reports whether a summary row holds credits.
func (r Row) IsCredit() bool { return r.Kind == meter.KindCredit }
