package app

import (
	"context"
	"io"
	"time"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api"
)

// The portal's and the API's health and export use cases: what `check
// node NODE tenant=T`, `show checks tenant=T`, `show health [history]
// tenant=T` and `export chargeback period=P format=F tenant=T` run, with
// the API's sign-in (a tenant's token or member) in place of the
// invoking Unix user's SpeakFor.

// apiHealth are the health use cases on the configuration's health
// service (api.HealthCases).
type apiHealth struct{ svc *health.Service }

var _ api.HealthCases = apiHealth{}

func (h apiHealth) Nodes(ctx context.Context, tenant string) ([]health.NodeView, error) {
	return h.svc.Health(ctx, health.HealthFilter{Tenant: tenant})
}

// Check is check node NODE tenant=T (the site's trigger checks, no
// wait): the service checks that the tenant uses the node and is within
// health.tenantChecksPerHour, and records the run with actor.
func (h apiHealth) Check(ctx context.Context, actor, tenant, node string) (health.Run, error) {
	return h.svc.Trigger(ctx, health.Request{Node: node, Tenant: tenant, Actor: actor})
}

func (h apiHealth) Run(ctx context.Context, id int64) (health.Run, []health.StoredResult, error) {
	r, err := h.svc.Store.Run(ctx, id)
	if err != nil {
		return r, nil, err
	}
	res, err := h.svc.Results(ctx, health.ResultFilter{RunID: id})
	return r, res, err
}

func (h apiHealth) Results(ctx context.Context, f health.ResultFilter) ([]health.StoredResult, error) {
	return h.svc.Results(ctx, f)
}

func (h apiHealth) History(ctx context.Context, tenant string, since time.Time) ([]health.HistoryEntry, error) {
	return h.svc.TenantHistory(ctx, tenant, "", since)
}

// apiExports are the chargeback export (api.Exports) on the CLI's use
// case: the request ParseExport builds of period= format= tenant=, written
// by ExportChargeback, so the bytes are the CLI's.
type apiExports struct{ e *Env }

var _ api.Exports = apiExports{}

func (x apiExports) Chargeback(ctx context.Context, tenant string, p meter.Period, f export.Format, w io.Writer) error {
	r, err := ParseExport(map[string]string{"period": p.String(), "format": string(f), "tenant": tenant}, false, "")
	if err != nil {
		return api.InputError(err)
	}
	return x.e.ExportChargeback(ctx, r, w)
}

// Daily sums the tenant's usage lines of the period (not its booking
// charges) per UTC day and GPU type: GPUs × the seconds of each day the
// line's run covers.
func (x apiExports) Daily(ctx context.Context, tenant string, p meter.Period) ([]api.DayUse, error) {
	books, err := x.e.Books(ctx)
	if err != nil {
		return nil, err
	}
	// The tenant's usage lines (unordered; no labels, no credits: only
	// the use), and while the month is open the accruals of its running
	// jobs.
	q := ledger.LineQuery{Booked: p, Account: tenant}
	lines := func(ctx context.Context, _ bool, fn func(meter.Line) error) error {
		if err := books.Ledger.ExportLines(ctx, books.Cluster, q, fn); err != nil { // every field: the count and the end too
			return err
		}
		if p < meter.PeriodOf(time.Now()) {
			return nil
		}
		return books.Ledger.Accruals(ctx, books.Cluster, q, fn)
	}
	return dailyUse(ctx, lines)
}

// dailyUse sums usage lines (not booking charges) per UTC day and GPU
// type: GPUs × the seconds of each day a line covers.
func dailyUse(ctx context.Context, lines export.Lines) ([]api.DayUse, error) {
	type key struct {
		day int64
		typ string
	}
	sums := map[key]int64{}
	var order []key
	err := lines(ctx, false, func(l meter.Line) error {
		if l.Charge || l.Count <= 0 {
			return nil
		}
		for s := l.Start; s < l.End; {
			day := s - s%86400
			e := min(l.End, day+86400)
			k := key{day, l.Type}
			if _, ok := sums[k]; !ok {
				order = append(order, k)
			}
			sums[k] += l.Count * (e - s)
			s = e
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]api.DayUse, 0, len(order))
	for _, k := range order {
		out = append(out, api.DayUse{Day: time.Unix(k.day, 0).UTC(), Type: k.typ, GPUSeconds: sums[k]})
	}
	return out, nil
}
