package reserve

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/internal/money"
)

// Span is a duration that reads and writes as ParseDuration's form ("14d",
// "36h", "90m") in JSON and YAML; zero means "no limit" where a policy says so.
type Span time.Duration

// MarshalJSON writes the span as "14d"-style text ("0s" for zero).
func (s Span) MarshalJSON() ([]byte, error) { return json.Marshal(FormatDuration(time.Duration(s))) }

// UnmarshalJSON reads "14d", "36h", "0" or "" (zero).
func (s *Span) UnmarshalJSON(b []byte) error {
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("duration: want a string such as \"14d\": %w", err)
	}
	if v = strings.TrimSpace(v); v == "" || v == "0" || v == "0s" {
		*s = 0
		return nil
	}
	d, err := ParseDuration(v)
	if err != nil {
		return err
	}
	*s = Span(d)
	return nil
}

// Policy limits what a tenant may book. The zero Policy limits nothing
// beyond the pool itself. The tenant spec will carry one per tenant;
// Settings.DefaultPolicy applies until then (and to tenants without one).
type Policy struct {
	// MaxGPUs is, per GPU type or MIG profile, the most GPUs the tenant may
	// have booked at once (whole-node bookings count their GPUs). A type
	// not listed is limited by the pool only; 0 forbids booking it.
	MaxGPUs map[string]int `json:"maxGPUs,omitempty"`
	// MaxWindow is the longest window of one booking (0: no limit).
	MaxWindow Span `json:"maxWindow,omitempty"`
	// MinLead is how far ahead of its start a booking must be made.
	MinLead Span `json:"minLead,omitempty"`
	// MaxHorizon is how far ahead a booking may end (0: no limit).
	MaxHorizon Span `json:"maxHorizon,omitempty"`
	// MonthlySpendLimit caps the cost of the tenant's bookings in each
	// calendar month (UTC); nil: no limit. It needs a Coster (the rate
	// card's booked tier): without one a limit refuses every booking, since
	// the cost cannot be known; so does a limit the cost's currency cannot
	// hold exactly.
	MonthlySpendLimit *money.Amount `json:"monthlySpendLimit,omitempty"`
	// MaxGPUsFromQuota: MaxGPUs is the tenant's quota, neither its policy
	// nor the default setting it (Service.Policy); refusals say how to
	// allow more.
	MaxGPUsFromQuota bool `json:"maxGPUsFromQuota,omitempty"`
}

// Validate reports every problem of the policy; field paths start with
// prefix (e.g. "tenants[2].bookings" or "bookings.defaultPolicy").
func (p Policy) Validate(prefix string) Problems {
	var ps Problems
	for _, t := range slices.Sorted(maps.Keys(p.MaxGPUs)) {
		if t == "" || strings.ContainsAny(t, ":=, ") {
			ps.Add(prefix+".maxGPUs", "%q is not a GPU type or MIG profile", t)
		}
		if p.MaxGPUs[t] < 0 {
			ps.Add(prefix+".maxGPUs."+t, "%d is negative; use 0 to forbid booking %s", p.MaxGPUs[t], t)
		}
	}
	for field, v := range map[string]Span{"maxWindow": p.MaxWindow, "minLead": p.MinLead, "maxHorizon": p.MaxHorizon} {
		if v < 0 {
			ps.Add(prefix+"."+field, "must not be negative")
		}
	}
	if p.MaxWindow > 0 && p.MaxHorizon > 0 && p.MaxWindow > p.MaxHorizon {
		ps.Add(prefix+".maxWindow", "%s is longer than maxHorizon %s: no booking could use it", FormatDuration(time.Duration(p.MaxWindow)), FormatDuration(time.Duration(p.MaxHorizon)))
	}
	if p.MonthlySpendLimit != nil && p.MonthlySpendLimit.Sign() < 0 {
		ps.Add(prefix+".monthlySpendLimit", "must not be negative")
	}
	slices.SortStableFunc(ps, func(a, b Problem) int { return strings.Compare(a.Field, b.Field) })
	return ps
}

// Coster prices booked GPU time: the cost of gpuSeconds of typ booked at
// at (the booked tier of the rate card, effective-dated).
type Coster interface {
	BookedCost(typ string, gpuSeconds int64, at time.Time) (money.Amount, error)
}

// Fields names the input fields policy problems are reported against.
type Fields struct {
	Start, End, GPUs string
}

// DefaultFields are the CLI's key names.
var DefaultFields = Fields{Start: "start", End: "end", GPUs: "gpus"}

// CheckPolicy reports what in b the tenant's policy forbids, given the
// tenant's other bookings (own) at now. coster may be nil.
func (s Settings) CheckPolicy(p Policy, b Booking, own []Booking, inv Inventory, now time.Time, coster Coster, f Fields) Problems {
	var ps Problems
	d := b.Duration()
	if p.MaxWindow > 0 && d > time.Duration(p.MaxWindow) {
		ps.Add(f.End, "the window is %s, longer than tenant %s may book at once (policy maxWindow %s)", FormatDuration(d), b.Tenant, FormatDuration(time.Duration(p.MaxWindow)))
	}
	if p.MinLead > 0 && b.Start.Before(now.Add(time.Duration(p.MinLead))) {
		ps.Add(f.Start, "%s is less than %s ahead; tenant %s must book at least that far ahead (policy minLead); the earliest start is %s",
			FormatTime(b.Start, Zone{}, false), FormatDuration(time.Duration(p.MinLead)), b.Tenant, FormatTime(now.Add(time.Duration(p.MinLead)).Truncate(time.Second).Add(time.Second), Zone{}, false))
	}
	if p.MaxHorizon > 0 && b.End.After(now.Add(time.Duration(p.MaxHorizon))) {
		ps.Add(f.End, "%s is beyond the booking horizon of %s (policy maxHorizon: bookings must end by %s)",
			FormatTime(b.End, Zone{}, false), FormatDuration(time.Duration(p.MaxHorizon)), FormatTime(now.Add(time.Duration(p.MaxHorizon)), Zone{}, false))
	}
	if len(p.MaxGPUs) > 0 {
		mine := s.Commitments(b, inv)
		var theirs []Commitment
		for _, o := range own {
			if b.ID == 0 || o.ID != b.ID {
				theirs = append(theirs, s.Commitments(o, inv)...)
			}
		}
		for _, typ := range slices.Sorted(maps.Keys(p.MaxGPUs)) {
			limit, r := p.MaxGPUs[typ], GPU(typ)
			cal := NewCalendar(Capacity{Resource: r}, append(slices.Clone(theirs), mine...))
			for _, m := range mine {
				if m.Resource != r {
					continue
				}
				for _, seg := range cal.Segments(fromUnix(m.Start), fromUnix(m.End)) {
					if seg.Committed > limit {
						hint := ""
						if p.MaxGPUsFromQuota {
							hint = fmt.Sprintf(": its quota, as its policy sets no maxGPUs; an admin allows more with `gpubridge modify tenant %s set booking.maxgpus=%s:N`", b.Tenant, typ)
						}
						ps.Add(f.GPUs, "tenant %s would have %d %s booked at once from %s, more than its policy allows (maxGPUs %s=%d%s)",
							b.Tenant, seg.Committed, typ, FormatTime(seg.From, Zone{}, false), typ, limit, hint)
						break
					}
				}
			}
		}
	}
	if p.MonthlySpendLimit != nil {
		ps = append(ps, s.checkSpend(*p.MonthlySpendLimit, b, own, inv, coster, f)...)
	}
	return ps
}

// checkSpend prices the tenant's GPU commitments per calendar month (UTC)
// touched by b and refuses when one would pass the limit.
func (s Settings) checkSpend(limit money.Amount, b Booking, own []Booking, inv Inventory, coster Coster, f Fields) Problems {
	var ps Problems
	if coster == nil {
		ps.Add(f.GPUs, "tenant %s has a monthly spend limit, but no booked rate is configured to price bookings with; refusing rather than guessing", b.Tenant)
		return ps
	}
	all := []Booking{b}
	for _, o := range own {
		if b.ID == 0 || o.ID != b.ID {
			all = append(all, o)
		}
	}
	months := map[time.Time]bool{}
	for m := monthOf(b.Start); m.Before(b.End); m = m.AddDate(0, 1, 0) {
		months[m] = true
	}
	for _, m := range slices.SortedFunc(maps.Keys(months), func(a, b time.Time) int { return a.Compare(b) }) {
		ms, me := m.Unix(), m.AddDate(0, 1, 0).Unix()
		var total money.Amount
		for _, o := range all {
			for _, c := range s.Commitments(o, inv) {
				k, typ := c.Resource.Split()
				if k != KindGPU {
					continue
				}
				a, z := max(c.Start, ms), min(c.End, me)
				if z <= a {
					continue
				}
				cost, err := coster.BookedCost(typ, int64(c.Count)*(z-a), fromUnix(a))
				if err != nil {
					ps.Add(f.GPUs, "cannot price booked %s for tenant %s's monthly spend limit: %v", typ, b.Tenant, err)
					return ps
				}
				if total, err = total.Add(cost); err != nil {
					ps.Add(f.GPUs, "cannot add up tenant %s's booked cost: %v", b.Tenant, err)
					return ps
				}
			}
		}
		lim, err := limit.In(total.Currency())
		if err != nil && total.Sign() != 0 {
			ps.Add(f.GPUs, "tenant %s's monthly spend limit %s cannot be compared with the booked cost in %s: %v", b.Tenant, limit, total.Currency(), err)
			return ps
		}
		if c, err := total.Cmp(lim); err == nil && c > 0 {
			ps.Add(f.GPUs, "tenant %s's bookings would cost %s %s in %s, over its monthly spend limit of %s", b.Tenant, total, total.Currency(), m.Format("2006-01"), limit)
		}
	}
	return ps
}

func monthOf(t time.Time) time.Time {
	y, m, _ := t.UTC().Date()
	return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
}
