package export

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/internal/money"
)

// Lines streams the lines of one period (ledger lines booked in it and,
// for an open period, its accruals). ordered asks for the export order:
// job id, submit time, usage period, tier, type, revision.
type Lines func(ctx context.Context, ordered bool, fn func(meter.Line) error) error

// Labeler names an account's tenant (a tenant's Slurm account has its
// name); ok is false for an account without a tenant, which is reported as
// such, never dropped.
type Labeler interface {
	Tenant(account string) (tenant string, ok bool)
}

// Meta describes the period being exported.
type Meta struct {
	Cluster string
	Period  meter.Period
	// Closed periods are exported with the card and labels stored at close.
	Closed   bool
	ClosedAt time.Time
	Card     pricing.Card
	Tenants  Labeler
	// Parties name who provides, publishes and invoices the GPU time
	// (FOCUS ProviderName, PublisherName, InvoiceIssuerName).
	Parties Parties
	// Now is when the export is made: the FOCUS metadata's CreationDate
	// of an open period (a closed period's is its close time). The data
	// never holds it.
	Now time.Time
	// Credits are the credit lines booked in the period (credit.go).
	Credits []Credit
}

// Parties name the site that bills, for FOCUS. An empty Provider is the
// cluster's name; an empty Publisher or InvoiceIssuer is the Provider.
type Parties struct {
	Provider, Publisher, InvoiceIssuer string
}

func (p Parties) resolve(cluster string) Parties {
	if p.Provider == "" {
		p.Provider = cluster
	}
	if p.Publisher == "" {
		p.Publisher = p.Provider
	}
	if p.InvoiceIssuer == "" {
		p.InvoiceIssuer = p.Provider
	}
	return p
}

// NoTenant is shown in place of a tenant for an account that has none.
const NoTenant = "(no tenant)"

// Item is a priced line.
type Item struct {
	meter.Line
	Tenant    string // NoTenant when the account has no tenant
	HasTenant bool
	Quote     pricing.Quote
	Amount    money.Amount
}

// Key groups items into summary rows.
type Key struct {
	Tenant  string
	Account string
	Type    string
	Tier    meter.Tier
	Kind    meter.Kind
	// Usage is the period the use belongs to (differs from the exported
	// period for adjustments).
	Usage meter.Period
	// Rate is the effective price per GPU-hour; a rate change within the
	// period gives a row per rate (From is the day the rate took effect).
	Rate  pricing.Price
	Basis string
	From  pricing.Date
	// Booking is the booking of a booking charge (kind booking) or of use
	// inside it (tier booked); 0 for every other row.
	Booking int64
}

// Row is one summary row.
type Row struct {
	Key
	HasTenant  bool
	GPUSeconds int64
	Lines      int
	Amount     money.Amount
}

// Summary is a priced period.
type Summary struct {
	Meta Meta
	Rows []Row // sorted by Key
	// GPUSeconds are the used GPU-seconds (what jobs held, inside bookings
	// too); booked GPU-seconds are in the booking rows only, so the total
	// reconciles with Slurm's accounting and no GPU-second counts twice.
	GPUSeconds int64
	Amount     money.Amount
	Lines      int
}

// pricer prices lines and remembers the unpriced ones.
type pricer struct {
	meta    Meta
	missing pricing.MissingTracker
	labels  map[string][2]string // account -> tenant, "1" if known
}

func newPricer(m Meta) *pricer { return &pricer{meta: m, labels: map[string][2]string{}} }

func (p *pricer) item(l meter.Line) (Item, bool, error) {
	it := Item{Line: l}
	lb, ok := p.labels[l.Account]
	if !ok {
		lb = [2]string{NoTenant, ""}
		if p.meta.Tenants != nil {
			if t, ok := p.meta.Tenants.Tenant(l.Account); ok {
				lb = [2]string{t, "1"}
			}
		}
		p.labels[l.Account] = lb
	}
	it.Tenant, it.HasTenant = lb[0], lb[1] != ""
	q, a, err := p.meta.Card.PriceLine(l)
	if errors.Is(err, pricing.ErrNoRate) {
		p.missing.Add(l.Type, l.Tier, l.GPUSeconds)
		return it, false, nil
	}
	if err != nil {
		return it, false, err
	}
	it.Quote, it.Amount = q, a
	return it, true, nil
}

// Summarize prices every line of the period and groups them. With
// allowMissing, lines without a rate are kept with amount 0 and a rate of
// -1 (for `show usage`); otherwise they fail with a *pricing.MissingRatesError.
func Summarize(ctx context.Context, m Meta, lines Lines, allowMissing bool) (Summary, error) {
	p := newPricer(m)
	rows := map[Key]*Row{}
	zero := money.Zero(m.Card.Unit())
	s := Summary{Meta: m, Amount: zero}
	err := lines(ctx, false, func(l meter.Line) error {
		it, priced, err := p.item(l)
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
	if err := p.missing.Err(); err != nil && !allowMissing {
		return s, fmt.Errorf("price %s: %w", m.Period, err)
	}
	if err := s.addCredits(p, rows); err != nil {
		return s, fmt.Errorf("price %s: %w", m.Period, err)
	}
	for _, r := range rows {
		s.Rows = append(s.Rows, *r)
	}
	// Accounts without a tenant come last, so they stand out.
	slices.SortFunc(s.Rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(b2i(!a.HasTenant), b2i(!b.HasTenant)), compareKeys(a.Key, b.Key))
	})
	return s, nil
}

func compareKeys(a, b Key) int {
	return cmp.Or(cmp.Compare(a.Tenant, b.Tenant), cmp.Compare(a.Account, b.Account), cmp.Compare(a.Type, b.Type),
		cmp.Compare(a.Tier, b.Tier), cmp.Compare(kindOrder(a.Kind), kindOrder(b.Kind)), cmp.Compare(a.Usage, b.Usage),
		cmp.Compare(a.Rate, b.Rate), cmp.Compare(a.Basis, b.Basis), cmp.Compare(a.From.Unix(), b.From.Unix()), cmp.Compare(a.Booking, b.Booking))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func kindOrder(k meter.Kind) int {
	switch k {
	case meter.KindUsage:
		return 0
	case meter.KindAccrual:
		return 1
	case meter.KindCredit:
		return 3
	case meter.KindBooking:
		return 4
	}
	return 2
}

// TenantTotal is one tenant's (account's) total: its amount (booking
// charges included) and its used GPU-seconds (booked ones not).
type TenantTotal struct {
	Tenant     string
	Account    string
	HasTenant  bool
	GPUSeconds int64
	Amount     money.Amount
}

// Tenants returns the totals per tenant and account, in row order. The
// amounts cannot overflow: each is at most the summary's total, which
// Summarize checked.
func (s Summary) Tenants() []TenantTotal {
	var out []TenantTotal
	for _, r := range s.Rows {
		used := r.GPUSeconds
		if r.Kind == meter.KindBooking {
			used = 0
		}
		if n := len(out); n > 0 && out[n-1].Account == r.Account && out[n-1].Tenant == r.Tenant {
			out[n-1].GPUSeconds += used
			out[n-1].Amount, _ = out[n-1].Amount.Add(r.Amount)
			continue
		}
		out = append(out, TenantTotal{Tenant: r.Tenant, Account: r.Account, HasTenant: r.HasTenant, GPUSeconds: used, Amount: r.Amount})
	}
	return out
}

// GPUHours formats GPU-seconds as hours with 6 decimals (half away from
// zero); the GPU-seconds are the exact figure.
func GPUHours(sec int64) string {
	neg := sec < 0
	if neg {
		sec = -sec
	}
	micro := microHours(sec)
	s := fmt.Sprintf("%d.%06d", micro/1_000_000, micro%1_000_000)
	if neg && micro != 0 {
		s = "-" + s
	}
	return s
}
