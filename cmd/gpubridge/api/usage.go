package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/internal/money"
)

// The usage route: a tenant's usage and spend in a period.

// UsageRow is one row of a tenant's usage: a GPU type, tier and kind.
type UsageRow struct {
	GPUType     string `json:"gpuType"`
	Tier        string `json:"tier"`
	Kind        string `json:"kind"`
	UsagePeriod string `json:"usagePeriod"`
	GPUSeconds  int64  `json:"gpuSeconds"`
	GPUHours    string `json:"gpuHours"`
	// Rate and Amount are decimals in Currency; empty when the type has
	// no rate (shown as such, never priced at zero).
	Rate   string `json:"rate,omitempty"`
	Amount string `json:"amount,omitempty"`
}

// usageView is a tenant's usage and spend in one period: `show usage
// tenant=NAME period=...` as JSON.
type usageView struct {
	Tenant     string     `json:"tenant"`
	Period     string     `json:"period"`
	Status     string     `json:"status"` // open, closed
	Currency   string     `json:"currency"`
	Rows       []UsageRow `json:"rows"`
	GPUSeconds int64      `json:"gpuSeconds"`
	GPUHours   string     `json:"gpuHours"`
	Amount     string     `json:"amount"`
	// Unpriced is true when some use has no rate: Amount leaves it out.
	Unpriced bool      `json:"unpriced"`
	AsOf     time.Time `json:"asOf"`
}

func usageOf(sm export.Summary, tenantName string, at time.Time) usageView {
	v := usageView{Tenant: tenantName, Period: sm.Meta.Period.String(), Status: "open", Currency: sm.Meta.Card.Currency,
		Rows: []UsageRow{}, GPUSeconds: sm.GPUSeconds, GPUHours: export.GPUHours(sm.GPUSeconds), Amount: sm.Amount.String(), AsOf: at}
	if sm.Meta.Closed {
		v.Status = "closed"
	}
	for _, r := range sm.Rows {
		row := UsageRow{GPUType: r.Type, Tier: string(r.Tier), Kind: string(r.Kind), UsagePeriod: r.Usage.String(),
			GPUSeconds: r.GPUSeconds, GPUHours: export.GPUHours(r.GPUSeconds)}
		switch {
		case r.IsCredit():
			row.Amount = r.Amount.String() // an amount given back, at no rate
		case r.Rate < 0:
			v.Unpriced = true
		default:
			row.Rate, row.Amount = r.Rate.String(), r.Amount.String()
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// accountSummary keeps one account's rows of a summary of every account,
// with its totals: what Summary of that account alone returns.
func accountSummary(sm export.Summary, account string) export.Summary {
	out := export.Summary{Meta: sm.Meta, Amount: money.Zero(sm.Meta.Card.Unit())}
	for _, r := range sm.Rows {
		if !strings.EqualFold(r.Account, account) {
			continue
		}
		out.Rows = append(out.Rows, r)
		out.GPUSeconds += r.GPUSeconds
		out.Lines += r.Lines
		if r.Rate >= 0 {
			out.Amount, _ = out.Amount.Add(r.Amount)
		}
	}
	return out
}

func (s *Server) tenantUsage(q *req) (int, any, error) {
	p := meter.PeriodOf(s.now())
	if v := q.r.URL.Query().Get("period"); v != "" {
		var err error
		if p, err = meter.ParsePeriod(v); err != nil {
			return 0, nil, badRequest(reserve.Problems{{Field: "period", Msg: err.Error()}})
		}
	}
	// The current period is in the snapshot (every account priced at
	// once): the tenant's rows of it are its Summary.
	if sm := q.snap.Usage; p == q.snap.Period && sm.Meta.Period == p && q.snap.Errors[PartUsage] == "" && q.snap.PartAt[PartUsage] == q.snap.At {
		return http.StatusOK, usageOf(accountSummary(sm, q.tenant), q.tenant, q.snap.At), nil
	}
	if s.o.Usage == nil {
		return 0, nil, errUnavailable
	}
	v, err := s.usage.get(usageKey{p, q.tenant}, func() (usageView, time.Duration, error) {
		sm, err := s.o.Usage.Summary(context.WithoutCancel(q.r.Context()), p, q.tenant) // loaded ahead (ttlCache.get)
		if err != nil {
			return usageView{}, 0, err
		}
		var ttl time.Duration
		if sm.Meta.Closed {
			ttl = time.Hour // a closed period never changes
		}
		return usageOf(sm, q.tenant, s.now()), ttl, nil
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, v, nil
}
