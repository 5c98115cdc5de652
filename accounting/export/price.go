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
// job id, submit time, usage period, tier, type, revision, with every
// field of each line. Unordered is the summary's pass ([Summarize]): in
// any order, and a line need carry only what a summary prices and groups
// by (Account, Type, Tier, Period, Booked, Final, Charge, Booking, Start,
// GPUSeconds), so a ledger can read fewer columns.
type Lines func(ctx context.Context, ordered bool, fn func(meter.Line) error) error

// Labeler names an account's tenant (a tenant's Slurm account has its
// name); ok is false for an account without a tenant, which is reported as
// such, never dropped.
type Labeler interface {
	Tenant(account string) (tenant string, ok bool)
}

// Profile is what finance needs of a tenant besides its name, from the
// tenant spec: its description, organization and cost centre (each may be
// empty). Exports write it beside the tenant on every row.
type Profile struct {
	Description  string `json:"description,omitempty"`
	Organization string `json:"organization,omitempty"`
	CostCenter   string `json:"costCenter,omitempty"`
}

// Profiles is a Profiler backed by a map (account → profile).
type Profiles map[string]Profile

// Profile implements Profiler.
func (p Profiles) Profile(account string) Profile { return p[account] }

// Profiler gives the profile of an account's tenant (the zero Profile for
// an account without one).
type Profiler interface {
	Profile(account string) Profile
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
	// Profiles, when set, give the tenants' profiles (description,
	// organization, cost centre) written beside their names.
	Profiles Profiler
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
	Profile   Profile
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
	HasTenant bool
	Profile   Profile
	// GPUSeconds are the row's GPU-seconds: booked ones in a booking
	// charge row (kind booking), used ones in every other ([Row.Split]).
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
	// BookedGPUSeconds are the GPU-seconds of the booking charges.
	BookedGPUSeconds int64
	Amount           money.Amount
	Lines            int
}

// Split returns a row's used and booked GPU-seconds: a booking charge's
// are booked, every other row's used. Exports write them in columns of
// their own, so that the sum of a column is a quantity.
func (r Row) Split() (used, booked int64) {
	if r.Kind == meter.KindBooking {
		return 0, r.GPUSeconds
	}
	return r.GPUSeconds, 0
}

// pricer prices lines and remembers the unpriced ones. Lines are priced
// with a pricing.LinePricer (each quote looked up once per type, tier and
// day, the amount from each line's own GPU-seconds, rounded once: exactly
// Card.PriceLine, see TestSummarizeEqualsLineByLine).
type pricer struct {
	meta    Meta
	lp      *pricing.LinePricer
	missing pricing.MissingTracker
	labels  map[string]label // by account
	// canon maps a quote id to the first id of an equal summary rate
	// (unit price, basis, effective date); -1 while not yet seen.
	canon []int
	seen  map[rateKey]int
}

type label struct {
	tenant    string
	hasTenant bool
	profile   Profile
}

type rateKey struct {
	rate  pricing.Price
	basis string
	from  int64
}

func newPricer(m Meta) *pricer {
	return &pricer{meta: m, lp: pricing.NewLinePricer(m.Card), labels: map[string]label{}, seen: map[rateKey]int{}}
}

func (p *pricer) label(account string) label {
	lb, ok := p.labels[account]
	if !ok {
		lb = label{tenant: NoTenant}
		if p.meta.Tenants != nil {
			if t, ok := p.meta.Tenants.Tenant(account); ok {
				lb = label{tenant: t, hasTenant: true}
			}
		}
		if lb.hasTenant && p.meta.Profiles != nil {
			lb.profile = p.meta.Profiles.Profile(account)
		}
		p.labels[account] = lb
	}
	return lb
}

// price returns l's quote id and amount; priced is false for a line
// without a rate (recorded in missing).
func (p *pricer) price(l meter.Line) (id int, a money.Amount, priced bool, err error) {
	id, err = p.lp.QuoteID(l)
	if errors.Is(err, pricing.ErrNoRate) {
		p.missing.Add(l.Type, l.Tier, l.GPUSeconds)
		return -1, money.Amount{}, false, nil
	}
	if err != nil {
		return -1, money.Amount{}, false, err
	}
	a, err = p.lp.Amount(id, l)
	return id, a, err == nil, err
}

// rateID returns the first quote id with the same summary rate as id.
func (p *pricer) rateID(id int) int {
	for len(p.canon) <= id {
		p.canon = append(p.canon, -1)
	}
	if c := p.canon[id]; c >= 0 {
		return c
	}
	q := p.lp.Quote(id)
	k := rateKey{q.UnitPrice(), q.Basis, q.From.Unix()}
	c, ok := p.seen[k]
	if !ok {
		c = id
		p.seen[k] = id
	}
	p.canon[id] = c
	return c
}

func (p *pricer) item(l meter.Line) (Item, bool, error) {
	it := Item{Line: l}
	lb := p.label(l.Account)
	it.Tenant, it.HasTenant, it.Profile = lb.tenant, lb.hasTenant, lb.profile
	id, a, priced, err := p.price(l)
	if !priced || err != nil {
		return it, false, err
	}
	it.Quote, it.Amount = p.lp.Quote(id), a
	return it, true, nil
}

// group is what Summarize adds up per summary row before the row's key
// is known in full: lines of one account, type, tier, kind, usage
// period, booking and summary rate (rate -1: unpriced).
type group struct {
	account, typ string
	tier         meter.Tier
	kind         meter.Kind
	usage        meter.Period
	booking      int64
	rate         int
}

type sums struct {
	gpuSeconds int64
	lines      int
	units      int64
}

// Summarize prices every line of the period and groups them. With
// allowMissing, lines without a rate are kept with amount 0 and a rate of
// -1 (for `show usage`); otherwise they fail with a *pricing.MissingRatesError.
//
// Each line is priced once and added to its row's sums and the totals in
// the order the lines come, the amounts checked for overflow at every
// addition, as money.Amount.Add would.
func Summarize(ctx context.Context, m Meta, lines Lines, allowMissing bool) (Summary, error) {
	p := newPricer(m)
	groups := map[group]*sums{}
	zero := money.Zero(p.lp.Unit())
	s := Summary{Meta: m, Amount: zero}
	var total int64
	err := lines(ctx, false, func(l meter.Line) error {
		id, a, priced, err := p.price(l)
		if err != nil {
			return err
		}
		g := group{account: l.Account, typ: l.Type, tier: l.Tier, kind: l.Kind(), usage: l.Period, booking: l.Booking, rate: -1}
		if priced {
			g.rate = p.rateID(id)
		}
		r, ok := groups[g]
		if !ok {
			r = &sums{}
			groups[g] = r
		}
		r.gpuSeconds += l.GPUSeconds
		r.lines++
		if l.Charge {
			s.BookedGPUSeconds += l.GPUSeconds
		} else {
			s.GPUSeconds += l.GPUSeconds
		}
		s.Lines++
		u := a.Units()
		if r.units, err = addUnits(r.units, u, p.lp.Unit()); err != nil {
			return err
		}
		total, err = addUnits(total, u, p.lp.Unit())
		return err
	})
	if err != nil {
		return s, fmt.Errorf("price %s: %w", m.Period, err)
	}
	if err := p.missing.Err(); err != nil && !allowMissing {
		return s, fmt.Errorf("price %s: %w", m.Period, err)
	}
	s.Amount = money.New(total, p.lp.Unit())
	rows := make(map[Key]*Row, len(groups))
	for g, sm := range groups {
		lb := p.label(g.account)
		k := Key{Tenant: lb.tenant, Account: g.account, Type: g.typ, Tier: g.tier, Kind: g.kind, Usage: g.usage, Rate: -1, Booking: g.booking}
		if g.rate >= 0 {
			q := p.lp.Quote(g.rate)
			k.Rate, k.Basis, k.From = q.UnitPrice(), q.Basis, q.From
		}
		if _, dup := rows[k]; dup { // cannot happen: a group is a key
			return s, fmt.Errorf("price %s: two groups of summary row %+v", m.Period, k)
		}
		rows[k] = &Row{Key: k, HasTenant: lb.hasTenant, Profile: lb.profile, GPUSeconds: sm.gpuSeconds, Lines: sm.lines, Amount: money.New(sm.units, p.lp.Unit())}
	}
	if err := s.addCredits(p, rows); err != nil {
		return s, fmt.Errorf("price %s: %w", m.Period, err)
	}
	for _, r := range rows {
		s.Rows = append(s.Rows, *r)
	}
	sortRows(s.Rows)
	return s, nil
}

// sortRows puts summary rows in their order: by key, accounts without a
// tenant last, so they stand out.
func sortRows(rows []Row) {
	slices.SortFunc(rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(b2i(!a.HasTenant), b2i(!b.HasTenant)), compareKeys(a.Key, b.Key))
	})
}

// addUnits is a + b minor units of cur, or money.Amount.Add's overflow
// error.
func addUnits(a, b int64, cur money.Currency) (int64, error) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		_, err := money.New(a, cur).Add(money.New(b, cur))
		return 0, err
	}
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
// charges included), its used GPU-seconds, its booked GPU-seconds (those
// of its booking charges) and its ledger lines.
type TenantTotal struct {
	Tenant           string
	Account          string
	HasTenant        bool
	Profile          Profile
	GPUSeconds       int64
	BookedGPUSeconds int64
	Lines            int
	Amount           money.Amount
}

// Tenants returns the totals per tenant and account, in row order. The
// amounts cannot overflow: each is at most the summary's total, which
// Summarize checked.
func (s Summary) Tenants() []TenantTotal {
	var out []TenantTotal
	for _, r := range s.Rows {
		used, booked := r.Split()
		if n := len(out); n > 0 && out[n-1].Account == r.Account && out[n-1].Tenant == r.Tenant {
			t := &out[n-1]
			t.GPUSeconds += used
			t.BookedGPUSeconds += booked
			t.Lines += r.Lines
			t.Amount, _ = t.Amount.Add(r.Amount)
			continue
		}
		out = append(out, TenantTotal{Tenant: r.Tenant, Account: r.Account, HasTenant: r.HasTenant, Profile: r.Profile,
			GPUSeconds: used, BookedGPUSeconds: booked, Lines: r.Lines, Amount: r.Amount})
	}
	return out
}

// GPUHours formats GPU-seconds as hours with 6 decimals (half away from
// zero); the GPU-seconds are the exact figure.
func GPUHours(sec int64) string {
	var buf [32]byte
	return string(appendGPUHours(buf[:0], sec))
}
