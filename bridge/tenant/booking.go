package tenant

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/internal/money"
)

// BookingPolicy is what a tenant may book (bridge/reserve): the tenant's
// own settings, each overriding the installation's default policy
// (bookings.defaultPolicy) key by key. A key the tenant does not set
// (nil, or a type missing from MaxGPUs) keeps the default's value; a set
// duration of 0 means "no limit" (minLead: none needed) even when the
// default has one. The zero BookingPolicy sets nothing: the default
// applies whole.
//
// In files and JSON:
//
//	bookings: {maxGPUs: {h100: 8}, maxWindow: 14d, minLead: 1d, maxHorizon: 90d, monthlySpendLimit: "5000.00"}
//
// On the command line: booking.maxgpus=h100:8 booking.maxwindow=14d
// booking.minlead=1d booking.maxhorizon=90d booking.spendlimit=5000.00
// (modify: KEY=none unsets one, booking=none all).
type BookingPolicy struct {
	// MaxGPUs: per GPU type or MIG profile, the most GPUs the tenant may
	// have booked at once (0 forbids booking the type).
	MaxGPUs map[string]int `json:"maxGPUs,omitempty"`
	// MaxWindow is the longest window of one booking (0: no limit).
	MaxWindow *reserve.Span `json:"maxWindow,omitempty"`
	// MinLead is how far ahead of its start a booking must be made.
	MinLead *reserve.Span `json:"minLead,omitempty"`
	// MaxHorizon is how far ahead a booking may end (0: no limit).
	MaxHorizon *reserve.Span `json:"maxHorizon,omitempty"`
	// MonthlySpendLimit caps the cost of the tenant's bookings in each
	// calendar month, in the rate card's currency (see Burst.MonthlyBudget
	// for how an amount without a currency is kept). Bookings are priced at
	// the rate card's booked tier; until one is configured a limit refuses
	// every booking rather than guess.
	MonthlySpendLimit *money.Amount `json:"monthlySpendLimit,omitempty"`
}

// IsZero reports whether p sets nothing (then the default applies whole).
func (p BookingPolicy) IsZero() bool {
	return len(p.MaxGPUs) == 0 && p.MaxWindow == nil && p.MinLead == nil && p.MaxHorizon == nil && p.MonthlySpendLimit == nil
}

// Clone returns a deep copy of p.
func (p BookingPolicy) Clone() BookingPolicy {
	c := BookingPolicy{MaxGPUs: maps.Clone(p.MaxGPUs)}
	for _, f := range []struct{ dst, src **reserve.Span }{{&c.MaxWindow, &p.MaxWindow}, {&c.MinLead, &p.MinLead}, {&c.MaxHorizon, &p.MaxHorizon}} {
		if *f.src != nil {
			v := **f.src
			*f.dst = &v
		}
	}
	if p.MonthlySpendLimit != nil {
		v := *p.MonthlySpendLimit
		c.MonthlySpendLimit = &v
	}
	if len(c.MaxGPUs) == 0 {
		c.MaxGPUs = nil
	}
	return c
}

// Over returns the policy that applies: def with each key p sets replaced
// (MaxGPUs merged by type).
func (p BookingPolicy) Over(def reserve.Policy) reserve.Policy {
	out := def
	if len(def.MaxGPUs) > 0 || len(p.MaxGPUs) > 0 {
		out.MaxGPUs = maps.Clone(def.MaxGPUs)
		if out.MaxGPUs == nil {
			out.MaxGPUs = map[string]int{}
		}
		maps.Copy(out.MaxGPUs, p.MaxGPUs)
	}
	if p.MaxWindow != nil {
		out.MaxWindow = *p.MaxWindow
	}
	if p.MinLead != nil {
		out.MinLead = *p.MinLead
	}
	if p.MaxHorizon != nil {
		out.MaxHorizon = *p.MaxHorizon
	}
	if p.MonthlySpendLimit != nil {
		v := *p.MonthlySpendLimit
		out.MonthlySpendLimit = &v
	}
	return out
}

// String writes p as the command line takes it, keys in a fixed order:
// maxgpus=h100:8 maxwindow=14d minlead=1d maxhorizon=90d spendlimit=5000.00
// ("" when p sets nothing).
func (p BookingPolicy) String() string {
	var parts []string
	if len(p.MaxGPUs) > 0 {
		var gs []string
		for _, t := range slices.Sorted(maps.Keys(p.MaxGPUs)) {
			gs = append(gs, fmt.Sprintf("%s:%d", t, p.MaxGPUs[t]))
		}
		parts = append(parts, "maxgpus="+strings.Join(gs, ","))
	}
	for _, f := range []struct {
		key string
		v   *reserve.Span
	}{{"maxwindow", p.MaxWindow}, {"minlead", p.MinLead}, {"maxhorizon", p.MaxHorizon}} {
		if f.v != nil {
			parts = append(parts, f.key+"="+reserve.FormatDuration(time.Duration(*f.v)))
		}
	}
	if p.MonthlySpendLimit != nil {
		parts = append(parts, "spendlimit="+p.MonthlySpendLimit.String())
	}
	return strings.Join(parts, " ")
}

// bookingFileKeys are the keys of a file's bookings: mapping.
var bookingFileKeys = []string{"maxGPUs", "maxWindow", "minLead", "maxHorizon", "monthlySpendLimit"}

// setBookingArg applies one booking.* key of `add/modify tenant`.
func setBookingArg(p *BookingPolicy, key, v string, modify bool, ps *Problems) {
	none := modify && strings.EqualFold(strings.TrimSpace(v), "none")
	switch key {
	case "booking":
		if !none {
			ps.Add("bookings", "only booking=none is accepted (it removes the tenant's booking policy, so the default applies); set the keys with booking.maxgpus=, booking.maxwindow=, booking.minlead=, booking.maxhorizon=, booking.spendlimit=")
			return
		}
		*p = BookingPolicy{}
	case "booking.maxgpus":
		field := "bookings.maxGPUs"
		qc, qp := ParseQuota(field, v)
		*ps = append(*ps, qp...)
		if !modify {
			for _, d := range qc.Drop {
				ps.Add(field+"."+d, "none is only for `modify tenant`; leave the type out instead")
			}
		}
		if p.MaxGPUs == nil || !modify {
			p.MaxGPUs = map[string]int{}
		}
		for t, n := range qc.Set {
			if n > MaxGPUs {
				ps.Add(field+"."+t, "%d is too large; at most %d", n, MaxGPUs)
				continue
			}
			p.MaxGPUs[t] = int(n)
		}
		for _, d := range qc.Drop {
			delete(p.MaxGPUs, d)
		}
		if len(p.MaxGPUs) == 0 {
			p.MaxGPUs = nil
		}
	case "booking.maxwindow", "booking.minlead", "booking.maxhorizon":
		dst := map[string]**reserve.Span{"booking.maxwindow": &p.MaxWindow, "booking.minlead": &p.MinLead, "booking.maxhorizon": &p.MaxHorizon}[key]
		field := map[string]string{"booking.maxwindow": "bookings.maxWindow", "booking.minlead": "bookings.minLead", "booking.maxhorizon": "bookings.maxHorizon"}[key]
		if none {
			*dst = nil
			return
		}
		s, msg := parseSpan(v)
		if msg != "" {
			ps.Add(field, "%s", msg)
			return
		}
		*dst = &s
	case "booking.spendlimit":
		field := "bookings.monthlySpendLimit"
		if none {
			p.MonthlySpendLimit = nil
			return
		}
		m, msg := ParseMoney(v)
		if msg != "" {
			ps.Add(field, "%s", msg)
			return
		}
		p.MonthlySpendLimit = &m
	}
}

// parseSpan reads a duration of the booking policy: 14d, 36h, 90m, 2w, or
// 0 (no limit).
func parseSpan(v string) (reserve.Span, string) {
	v = strings.TrimSpace(v)
	if v == "0" || v == "0s" {
		return 0, ""
	}
	if strings.HasPrefix(v, "-") {
		return 0, fmt.Sprintf("%s is negative; give a duration such as 14d, or 0 for no limit", v)
	}
	d, err := reserve.ParseDuration(v)
	if err != nil {
		return 0, fmt.Sprintf("%v; or 0 for no limit", err)
	}
	return reserve.Span(d), ""
}

// parseBookings reads a file's bookings: mapping.
func parseBookings(v json.RawMessage, p *BookingPolicy, kinds *yamlNode) Problems {
	var ps Problems
	var m map[string]json.RawMessage
	if err := decode(v, &m); err != nil || m == nil {
		ps.Add("bookings", "must be a mapping with %s", strings.Join(bookingFileKeys, ", "))
		return ps
	}
	for _, k := range sortedKeys(m) {
		f := "bookings." + k
		switch k {
		case "maxGPUs":
			q, qp := parseQuotaValue(m[k], kinds.get(k))
			for i := range qp {
				qp[i].Field = strings.Replace(qp[i].Field, "gpus", f, 1)
			}
			ps = append(ps, qp...)
			for t, n := range q {
				if n > MaxGPUs {
					ps.Add(f+"."+t, "%d is too large; at most %d", n, MaxGPUs)
					continue
				}
				if p.MaxGPUs == nil {
					p.MaxGPUs = map[string]int{}
				}
				p.MaxGPUs[t] = int(n)
			}
		case "maxWindow", "minLead", "maxHorizon":
			s, ok := scalar(m[k])
			if !ok {
				ps.Add(f, "must be a duration such as 14d")
				continue
			}
			sp, msg := parseSpan(s)
			if msg != "" {
				ps.Add(f, "%s", msg)
				continue
			}
			switch k {
			case "maxWindow":
				p.MaxWindow = &sp
			case "minLead":
				p.MinLead = &sp
			default:
				p.MaxHorizon = &sp
			}
		case "monthlySpendLimit":
			s, _ := scalar(m[k])
			mo, msg := ParseMoney(s)
			if km := kindProblem(kinds.get(k), wantAmount, s); km != "" {
				msg = km
			}
			if msg != "" {
				ps.Add(f, "%s", msg)
				continue
			}
			p.MonthlySpendLimit = &mo
		default:
			ps.Add(f, "is not a bookings field; known fields: %s", strings.Join(bookingFileKeys, ", "))
		}
	}
	return ps
}

// validateBookings checks a tenant's booking policy with
// reserve.Policy.Validate (on the keys it sets) and the GPU types against
// the cluster's.
func validateBookings(p BookingPolicy, known map[string]bool, knownList []string) Problems {
	var ps Problems
	rp := reserve.Policy{MaxGPUs: p.MaxGPUs, MonthlySpendLimit: p.MonthlySpendLimit}
	for _, f := range []struct {
		dst *reserve.Span
		src *reserve.Span
	}{{&rp.MaxWindow, p.MaxWindow}, {&rp.MinLead, p.MinLead}, {&rp.MaxHorizon, p.MaxHorizon}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	ps = append(ps, rp.Validate("bookings")...) // one Problem type for both packages
	for _, t := range slices.Sorted(maps.Keys(p.MaxGPUs)) {
		if msg := CheckGPUType(t); msg != "" {
			ps.Add("bookings.maxGPUs."+t, "%s", msg)
			continue
		}
		if p.MaxGPUs[t] > MaxGPUs {
			ps.Add("bookings.maxGPUs."+t, "%d is too large; at most %d", p.MaxGPUs[t], MaxGPUs)
		}
		if known != nil && !known[t] {
			ps.Add("bookings.maxGPUs."+t, "%s", unknownType(t, knownList))
		}
	}
	if b := p.MonthlySpendLimit; b != nil {
		if c, err := b.Cmp(MaxBudget); c > 0 || err != nil {
			ps.Add("bookings.monthlySpendLimit", "%s is out of range; give 0 to %s", b.String(), MaxBudget)
		}
	}
	return ps
}
