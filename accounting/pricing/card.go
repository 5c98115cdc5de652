package pricing

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/money"
)

// CurrentVersion is the rate card format this build reads.
const CurrentVersion = 1

// DefaultParentSlices is the number of compute slices of a MIG-capable GPU
// (A100, H100, H200, B200: 7).
const DefaultParentSlices = 7

// Card is a rate card.
type Card struct {
	Version  int    `json:"version"`
	Currency string `json:"currency"`
	// MinorUnits is the number of digits of the currency's minor unit;
	// nil means the ISO 4217 exponent of Currency (2 for most).
	MinorUnits *int      `json:"minorUnits,omitempty"`
	Types      []GPUType `json:"types,omitempty"`
	Rates      []Rate    `json:"rates"`
}

// GPUType describes a GPU type the card knows beyond its rates: for a MIG
// profile, the GPU model it is a slice of.
type GPUType struct {
	Name string `json:"name"`
	// Parent is the full-GPU type a MIG profile is carved from ("h100").
	Parent string `json:"parent,omitempty"`
	// Slices is the profile's compute slices; 0 means read it from the
	// name ("3g.40gb" → 3).
	Slices int `json:"slices,omitempty"`
	// ParentSlices is the parent's compute slices; 0 means 7.
	ParentSlices int `json:"parentSlices,omitempty"`
}

// Rate is a price per GPU-hour for one type and tier from a date on.
type Rate struct {
	Type string `json:"type"`
	// Tier is reserved, ondemand, booked, or empty for both reserved and
	// ondemand. The booked tier (booking charges) has only rates that
	// name it: a booking is never charged at a usage rate by accident.
	Tier       meter.Tier `json:"tier,omitempty"`
	PerGPUHour Price      `json:"perGPUHour"`
	From       Date       `json:"from"`
}

// Date is a calendar day, 00:00:00 UTC; it reads and writes as YYYY-MM-DD.
type Date struct{ t time.Time }

// ParseDate reads YYYY-MM-DD.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Date{}, fmt.Errorf("date %q: want YYYY-MM-DD", s)
	}
	return Date{t}, nil
}

// DateOf returns the day holding t in UTC.
func DateOf(t time.Time) Date {
	y, m, d := t.UTC().Date()
	return Date{time.Date(y, m, d, 0, 0, 0, 0, time.UTC)}
}

func (d Date) String() string  { return d.t.Format(time.DateOnly) }
func (d Date) Unix() int64     { return d.t.Unix() }
func (d Date) IsZero() bool    { return d.t.IsZero() }
func (d Date) Time() time.Time { return d.t }

// MarshalText writes YYYY-MM-DD.
func (d Date) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads YYYY-MM-DD.
func (d *Date) UnmarshalText(b []byte) error {
	v, err := ParseDate(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// ParseYAML reads a rate card (YAML or JSON), rejecting unknown fields,
// files over MaxCardBytes and unquoted numbers YAML would round, and
// validates it.
func ParseYAML(b []byte) (Card, error) {
	if len(b) > MaxCardBytes {
		return Card{}, ValidationError{{"file", fmt.Sprintf("is %d bytes; a rate card has at most %d (1 MiB)", len(b), MaxCardBytes)}}
	}
	if errs := checkNumbers(b); len(errs) > 0 {
		return Card{}, errs
	}
	var c Card
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return Card{}, fmt.Errorf("rate card: %w", err)
	}
	if err := c.Validate(); err != nil {
		return Card{}, err
	}
	return c, nil
}

// YAML writes the card as YAML.
func (c Card) YAML() ([]byte, error) { return yaml.Marshal(c) }

// Unit returns the currency the card's amounts are counted in: its code
// and minor digits (MinorUnits, or the ISO 4217 exponent of Currency). A
// card that does not validate counts in 2 digits of its code.
func (c Card) Unit() money.Currency {
	cur, err := money.Lookup(c.Currency, c.MinorUnits)
	if err != nil {
		return money.Currency{Code: c.Currency, Minor: 2}
	}
	return cur
}

// Minor returns the number of minor-unit digits the card's amounts have.
func (c Card) Minor() int { return c.Unit().Minor }

// FieldError is one problem with one field of a card.
type FieldError struct{ Field, Msg string }

func (e FieldError) Error() string { return e.Field + ": " + e.Msg }

// ValidationError lists every problem Validate found.
type ValidationError []FieldError

func (v ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid rate card (%d problem(s)):", len(v))
	for _, e := range v {
		b.WriteString("\n  - " + e.Error())
	}
	return b.String()
}

var (
	typeRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	// migRe reads the compute slices from a MIG profile name, with or
	// without a model prefix: "1g.10gb", "nvidia_h100_80gb_hbm3_3g.40gb",
	// "1g.10gb+me".
	migRe = regexp.MustCompile(`(?:^|[_-])([1-8])g\.[0-9]+gb(?:\+me)?$`)
)

// SlicesFromName returns the compute slices of a MIG profile name, or 0.
func SlicesFromName(name string) int {
	m := migRe.FindStringSubmatch(name)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// Validate reports every problem at once, each with its field path.
func (c Card) Validate() error {
	var errs ValidationError
	c.validateCurrency(&errs)
	types := c.validateTypeNames(&errs)
	c.validateParents(&errs, types)
	c.validateRates(&errs)
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// add records the problem of a field.
func (e *ValidationError) add(field, format string, a ...any) {
	*e = append(*e, FieldError{field, fmt.Sprintf(format, a...)})
}

// validateCurrency checks the card's version, its currency code and its
// minor units (a bad count of minor units is reported alone, the code
// checked without it).
func (c Card) validateCurrency(errs *ValidationError) {
	if c.Version != CurrentVersion {
		errs.add("version", "is %d; this gpubridge reads rate cards of version %d", c.Version, CurrentVersion)
	}
	minor := c.MinorUnits
	badMinor := minor != nil && (*minor < 0 || *minor > money.MaxMinor)
	if badMinor {
		minor = new(int) // check the code alone
	}
	if _, err := money.Lookup(c.Currency, minor); err != nil {
		errs.add("currency", "%v (minorUnits: N)", err)
	}
	if badMinor {
		errs.add("minorUnits", "%d: want 0 to %d", *c.MinorUnits, money.MaxMinor)
	}
}

// validateTypeNames checks that each GPU type has a valid name, declared
// once, and returns the types by name.
func (c Card) validateTypeNames(errs *ValidationError) map[string]GPUType {
	types := map[string]GPUType{}
	for i, t := range c.Types {
		f := fmt.Sprintf("types[%d]", i)
		if !typeRe.MatchString(t.Name) {
			errs.add(f+".name", "%q is not a GPU type name (letters, digits, '.', '_', '-')", t.Name)
		}
		if _, dup := types[t.Name]; dup {
			errs.add(f+".name", "%q is declared twice", t.Name)
		}
		types[t.Name] = t
	}
	return types
}

// validateParents checks the MIG profiles: a parent that is a full GPU
// (not the type itself, not another profile), and compute slices that fit
// the parent's; a type without a parent has no slices.
func (c Card) validateParents(errs *ValidationError, types map[string]GPUType) {
	for i, t := range c.Types {
		f := fmt.Sprintf("types[%d]", i)
		if t.Parent == "" {
			if t.Slices != 0 || t.ParentSlices != 0 {
				errs.add(f, "slices and parentSlices need a parent")
			}
			continue
		}
		if t.Parent == t.Name {
			errs.add(f+".parent", "a type cannot be its own parent")
		} else if p, ok := types[t.Parent]; ok && p.Parent != "" {
			errs.add(f+".parent", "%q is itself a MIG profile of %q; name the full GPU", t.Parent, p.Parent)
		}
		ps := cmp.Or(t.ParentSlices, DefaultParentSlices)
		s := cmp.Or(t.Slices, SlicesFromName(t.Name))
		switch {
		case t.ParentSlices < 0 || ps > 8:
			errs.add(f+".parentSlices", "%d: want 1 to 8", t.ParentSlices)
		case s == 0:
			errs.add(f+".slices", "cannot read compute slices from %q; set slices (e.g. 3 for a 3g profile)", t.Name)
		case s < 0 || s > ps:
			errs.add(f+".slices", "%d: want 1 to %d (the parent's slices)", s, ps)
		}
	}
}

// validateRates checks each rate: its type name and tier, a price from 0
// to MaxPrice, a first day, and no two rates of one type, tier and day.
func (c Card) validateRates(errs *ValidationError) {
	type rk struct {
		typ  string
		tier meter.Tier
		from string
	}
	seen := map[rk]int{}
	for i, r := range c.Rates {
		f := fmt.Sprintf("rates[%d]", i)
		if !typeRe.MatchString(r.Type) {
			errs.add(f+".type", "%q is not a GPU type name", r.Type)
		}
		if r.Tier != "" {
			if _, err := meter.ParseTier(string(r.Tier)); err != nil {
				errs.add(f+".tier", "%v (or leave empty for both reserved and ondemand)", err)
			}
		}
		if r.PerGPUHour < 0 {
			errs.add(f+".perGPUHour", "must not be negative")
		} else if r.PerGPUHour > MaxPrice {
			errs.add(f+".perGPUHour", "%s is too large; at most %d per GPU-hour", r.PerGPUHour, MaxPriceWhole)
		}
		if r.From.IsZero() {
			errs.add(f+".from", "is required (YYYY-MM-DD, the first day the rate applies)")
		}
		k := rk{r.Type, r.Tier, r.From.String()}
		if j, dup := seen[k]; dup {
			errs.add(f, "same type, tier and date as rates[%d]", j)
		}
		seen[k] = i
	}
}

// ErrNoRate is wrapped by every error about a missing rate.
var ErrNoRate = errors.New("no rate")

// Quote is the price that applies to a line: a rate per GPU-hour times a
// weight (Num/Den: 1/1 for a type's own rate, slices/parentSlices for a MIG
// profile priced from its parent).
type Quote struct {
	Type     string
	Tier     meter.Tier
	PerHour  Price // the rate the weight applies to
	Num, Den int64
	// Basis names the rate used: "h100" for an own rate, or
	// "h100 × 1/7" for a profile priced from its parent.
	Basis string
	From  Date
}

// UnitPrice is the effective price per GPU-hour, rounded half away from
// zero to 9 digits for display; amounts use the exact fraction. The
// product PerHour × Num is taken in 128 bits, so no weight overflows it; a
// result beyond a Price (a weight above 1, which Validate refuses) is
// clamped to the largest Price.
func (q Quote) UnitPrice() Price {
	if q.Den <= 0 || q.Num < 0 || q.PerHour < 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(q.PerHour), uint64(q.Num))
	d := uint64(q.Den)
	if hi >= d {
		return Price(math.MaxInt64)
	}
	p, r := bits.Div64(hi, lo, d)
	if r >= d-r { // 2r >= d without overflow
		p++
	}
	if p > math.MaxInt64 {
		return Price(math.MaxInt64)
	}
	return Price(p)
}

// Quote returns the price for typ in tier at instant at (Unix seconds).
func (c Card) Quote(typ string, tier meter.Tier, at int64) (Quote, error) {
	if r, ok := c.own(typ, tier, at); ok {
		return Quote{Type: typ, Tier: tier, PerHour: r.PerGPUHour, Num: 1, Den: 1, Basis: typ, From: r.From}, nil
	}
	for _, t := range c.Types {
		if t.Name != typ || t.Parent == "" {
			continue
		}
		r, ok := c.own(t.Parent, tier, at)
		if !ok {
			return Quote{}, fmt.Errorf("%w for %s (%s): its parent %s has no %s rate on %s", ErrNoRate, typ, tier, t.Parent, tier, time.Unix(at, 0).UTC().Format(time.DateOnly))
		}
		ps := int64(cmp.Or(t.ParentSlices, DefaultParentSlices))
		s := int64(cmp.Or(t.Slices, SlicesFromName(t.Name)))
		return Quote{Type: typ, Tier: tier, PerHour: r.PerGPUHour, Num: s, Den: ps,
			Basis: fmt.Sprintf("%s x %d/%d", t.Parent, s, ps), From: r.From}, nil
	}
	return Quote{}, fmt.Errorf("%w for %s (%s) on %s", ErrNoRate, typ, tier, time.Unix(at, 0).UTC().Format(time.DateOnly))
}

// own finds typ's own rate for tier at instant at.
func (c Card) own(typ string, tier meter.Tier, at int64) (Rate, bool) {
	var best Rate
	found := false
	for _, r := range c.Rates {
		if r.Type != typ || (r.Tier != "" && r.Tier != tier) || (r.Tier == "" && tier == meter.Booked) || r.From.Unix() > at {
			continue
		}
		if !found || r.From.Unix() > best.From.Unix() || (r.From.Unix() == best.From.Unix() && r.Tier != "" && best.Tier == "") {
			best, found = r, true
		}
	}
	return best, found
}

// Amount prices gpuSeconds (negative for a correction) at q, rounded once,
// half away from zero, to the card's minor unit. The product is exact
// (128 bits, math/big beyond); a result beyond 64 bits of minor units is
// an error, never a wrapped number.
func (c Card) Amount(q Quote, gpuSeconds int64) (money.Amount, error) {
	if q.Den <= 0 || q.Num < 0 || q.PerHour < 0 {
		return money.Amount{}, fmt.Errorf("invalid quote %+v", q)
	}
	unit := c.Unit()
	// gpuSeconds × perHour[1e-9] × num × 10^minor / (3600 × 1e9 × den)
	a, err := mulDivRound(gpuSeconds, uint64(q.PerHour), uint64(q.Num), uint64(3600*priceUnit)*uint64(q.Den), unit.Minor)
	if err != nil {
		return money.Amount{}, fmt.Errorf("price %d GPU-seconds of %s at %s: %w", gpuSeconds, q.Type, q.Basis, err)
	}
	return money.New(a, unit), nil
}

// Missing is one GPU type and tier that has use but no rate.
type Missing struct {
	Type       string
	Tier       meter.Tier
	GPUSeconds int64
	Lines      int
}

// MissingRatesError lists every type and tier without a rate. It wraps
// ErrNoRate.
type MissingRatesError struct{ Items []Missing }

func (e *MissingRatesError) Error() string {
	parts := make([]string, len(e.Items))
	for i, m := range e.Items {
		parts[i] = fmt.Sprintf("%s (%s: %d GPU-seconds in %d line(s))", m.Type, m.Tier, m.GPUSeconds, m.Lines)
	}
	return "no rate for GPU type(s): " + strings.Join(parts, ", ") +
		"; add a rate (gpubridge add rate type=... tier=... price=... from=...) or, for a MIG profile, its parent (gpubridge add gputype name=... parent=...)"
}

func (e *MissingRatesError) Unwrap() error { return ErrNoRate }

// MissingTracker collects lines that have no rate, for one error at the end.
type MissingTracker struct{ m map[[2]string]*Missing }

// Add records a line without a rate.
func (t *MissingTracker) Add(typ string, tier meter.Tier, gpuSeconds int64) {
	if t.m == nil {
		t.m = map[[2]string]*Missing{}
	}
	k := [2]string{typ, string(tier)}
	m, ok := t.m[k]
	if !ok {
		m = &Missing{Type: typ, Tier: tier}
		t.m[k] = m
	}
	m.GPUSeconds += gpuSeconds
	m.Lines++
}

// Err returns nil or a *MissingRatesError sorted by type and tier.
func (t *MissingTracker) Err() error {
	if len(t.m) == 0 {
		return nil
	}
	e := &MissingRatesError{}
	for _, m := range t.m {
		e.Items = append(e.Items, *m)
	}
	slices.SortFunc(e.Items, func(a, b Missing) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Tier, b.Tier))
	})
	return e
}

// WithRate returns a copy of c with r added, replacing a rate of the same
// type, tier and date, validated.
func (c Card) WithRate(r Rate) (Card, error) {
	out := c.clone()
	out.Rates = slices.DeleteFunc(out.Rates, func(x Rate) bool {
		return x.Type == r.Type && x.Tier == r.Tier && x.From.Unix() == r.From.Unix()
	})
	out.Rates = append(out.Rates, r)
	slices.SortStableFunc(out.Rates, func(a, b Rate) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Tier, b.Tier), cmp.Compare(a.From.Unix(), b.From.Unix()))
	})
	return out, out.Validate()
}

// WithoutRate returns a copy of c without the rate of that type, tier and
// date; found is false when there was none.
func (c Card) WithoutRate(typ string, tier meter.Tier, from Date) (out Card, found bool) {
	out = c.clone()
	n := len(out.Rates)
	out.Rates = slices.DeleteFunc(out.Rates, func(x Rate) bool {
		return x.Type == typ && x.Tier == tier && x.From.Unix() == from.Unix()
	})
	return out, len(out.Rates) != n
}

// WithType returns a copy of c with t declared (replacing a declaration of
// the same name), validated.
func (c Card) WithType(t GPUType) (Card, error) {
	out := c.clone()
	out.Types = slices.DeleteFunc(out.Types, func(x GPUType) bool { return x.Name == t.Name })
	out.Types = append(out.Types, t)
	slices.SortStableFunc(out.Types, func(a, b GPUType) int { return cmp.Compare(a.Name, b.Name) })
	return out, out.Validate()
}

func (c Card) clone() Card {
	out := c
	out.Types = slices.Clone(c.Types)
	out.Rates = slices.Clone(c.Rates)
	if c.MinorUnits != nil {
		m := *c.MinorUnits
		out.MinorUnits = &m
	}
	return out
}

// RateDate is the instant whose rate prices a line: the start of its use
// (the run clipped to the period), or the period's start for a line
// without one.
func RateDate(l meter.Line) int64 {
	if l.Start > 0 {
		return l.Start
	}
	return l.Period.StartUnix()
}

// InsideBookingBasis is the rate basis of use inside a booking: priced at
// 0, since the booking's charge paid for those GPUs.
const InsideBookingBasis = "inside booking"

// PriceLine prices one ledger line at the rate in effect at RateDate(l),
// rounded once. Use of tier Booked (a job inside a booking's reservation)
// costs 0 (basis "inside booking"; its quote's price is the booked rate,
// the list price of that use, or 0 without one); a booking charge (l.Charge) is priced
// at the booked rate of its type, which must exist (ErrNoRate otherwise,
// never 0).
func (c Card) PriceLine(l meter.Line) (Quote, money.Amount, error) {
	if l.Tier == meter.Booked && !l.Charge {
		// The list price is the booked rate (what the use would cost),
		// when there is one; the amount is 0 either way.
		q, err := c.Quote(l.Type, l.Tier, RateDate(l))
		if err != nil {
			q = Quote{Type: l.Type, Tier: l.Tier, Num: 1, Den: 1}
		}
		q.Basis = InsideBookingBasis
		return q, money.Zero(c.Unit()), nil
	}
	if l.Charge && l.Tier != meter.Booked {
		return Quote{}, money.Amount{}, fmt.Errorf("booking %d: a charge line of tier %s (want booked)", l.Booking, l.Tier)
	}
	q, err := c.Quote(l.Type, l.Tier, RateDate(l))
	if err != nil {
		return Quote{}, money.Amount{}, err
	}
	a, err := c.Amount(q, l.GPUSeconds)
	return q, a, err
}
