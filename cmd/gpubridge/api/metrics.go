package api

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// Metrics are the API's collectors and the snapshot's gauges: per tenant
// and GPU type, per pool type, and the cycle's own. Labels are tenants,
// GPU types, routes and reasons only (never a job or booking id).
type Metrics struct {
	requests     *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	authFailures *prometheus.CounterVec
	rateLimited  prometheus.Counter
	drift        prometheus.Gauge
	live         atomic.Pointer[Live]
}

// NewMetrics registers the collectors on reg (none when nil, for tests).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpubridge_api_requests_total", Help: "Tenant API requests by route (the OpenAPI path), method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "gpubridge_api_request_duration_seconds", Help: "Tenant API request latency by route and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route", "method"}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpubridge_api_auth_failures_total", Help: "Failed authentications by reason (missing, malformed, unknown, expired).",
		}, []string{"reason"}),
		rateLimited: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gpubridge_api_rate_limited_total", Help: "Requests refused (429): too many failed authentications from their source address, or past their token's or address's request rate.",
		}),
		drift: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gpubridge_reconcile_drift_changes", Help: "Changes the last reconcile found between the tenant store and Slurm (0 when in sync).",
		}),
	}
	for _, r := range []string{"missing", "malformed", "unknown", "expired"} {
		m.authFailures.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.duration, m.authFailures, m.rateLimited, m.drift, snapshotCollector{m})
	}
	return m
}

// SetLive makes the snapshot gauges follow l (one per configuration).
func (m *Metrics) SetLive(l *Live) { m.live.Store(l) }

// ObserveReconcile records how many changes a reconcile plan held.
func (m *Metrics) ObserveReconcile(changes int) { m.drift.Set(float64(changes)) }

// observe counts a request. Every label is folded to a fixed set (the
// routes, the methods of methodLabel, the codes of codeLabel), so that no
// client, authenticated or not, makes series of its own.
func (m *Metrics) observe(route, method string, code int, d time.Duration) {
	method = methodLabel(method)
	m.requests.WithLabelValues(route, method, strconv.Itoa(codeLabel(code))).Inc()
	if d > 0 {
		m.duration.WithLabelValues(route, method).Observe(d.Seconds())
	}
}

// The snapshot's metric descriptions.
var (
	descQuota     = desc("gpubridge_tenant_quota_gpus", "A tenant's quota (GrpTRES) per GPU type.", "tenant", "gpu_type")
	descAllocated = desc("gpubridge_tenant_allocated_gpus", "GPUs a tenant's running jobs hold now (in quota, bursting and inside bookings), per type; absent while 0.", "tenant", "gpu_type")
	descInQuota   = desc("gpubridge_tenant_in_quota_gpus", "GPUs a tenant's running jobs hold under its QOS now: what counts against its quota.", "tenant", "gpu_type")
	descBursting  = desc("gpubridge_tenant_bursting_gpus", "GPUs a tenant's running jobs hold in the on-demand tier now; absent while 0.", "tenant", "gpu_type")
	descPending   = desc("gpubridge_tenant_pending_gpus", "GPUs a tenant's pending jobs ask for; absent while 0.", "tenant", "gpu_type")
	descBooked    = desc("gpubridge_tenant_booked_gpus", "GPUs of a tenant's bookings in force now; absent while 0.", "tenant", "gpu_type")
	descUsage     = desc("gpubridge_tenant_usage_gpu_seconds", "A tenant's GPU-seconds booked in the current billing period (the ledger, accruals of running jobs included), per type.", "tenant", "gpu_type")
	// creditType is the gpu_type label of a tenant's credits in the spend metric.
	creditType    = "(credit)"
	descSpend     = desc("gpubridge_tenant_spend_minor_units", "A tenant's spend in the current billing period per type, in minor units of the rate card's currency (priced use only; health credits, negative, under gpu_type=\"(credit)\").", "tenant", "gpu_type", "currency")
	descUnpriced  = desc("gpubridge_tenant_unpriced_gpu_seconds", "GPU-seconds of the current period without a rate (a close would refuse them).", "tenant", "gpu_type")
	descBudget    = desc("gpubridge_tenant_burst_budget_minor_units", "A tenant's monthly on-demand budget, in minor units of the rate card's currency (absent without a budget).", "tenant", "currency")
	descCommitted = desc("gpubridge_tenant_burst_committed_minor_units", "A tenant's on-demand spend this month, booked plus estimated in flight, in minor units (absent without a budget).", "tenant", "currency")
	descLeft      = desc("gpubridge_tenant_burst_budget_left_minor_units", "A tenant's on-demand budget left this month (budget less committed), in minor units (absent without a budget).", "tenant", "currency")
	descCap       = desc("gpubridge_pool_capacity_gpus", "GPUs slurmctld reports for the pool's nodes, per type.", "gpu_type")
	descBookable  = desc("gpubridge_pool_bookable_gpus", "GPUs of the pool bookable now (less down or drained nodes, maintenance, foreign reservations, the unbookable share).", "gpu_type")
	descPoolBook  = desc("gpubridge_pool_booked_gpus", "GPUs committed to bookings now, per type.", "gpu_type")
	descPoolAlloc = desc("gpubridge_pool_allocated_gpus", "GPUs running jobs hold now (every account), per type.", "gpu_type")
	descFree      = desc("gpubridge_pool_free_gpus", "Idle GPUs of the pool now (capacity less allocated), per type.", "gpu_type")
	descAtRisk    = desc("gpubridge_tenant_bookings_at_risk", "A tenant's bookings in force or ahead that may not be honoured (state at-risk).", "tenant")
	descIngestLag = desc("gpubridge_ingest_lag_seconds", "Seconds between the snapshot and the end time of the newest job run ingested into the ledger.")
	descSnapAge   = desc("gpubridge_snapshot_timestamp_seconds", "When the API's snapshot (tenants, jobs, burst plan, bookings, usage) was taken.")
	descPartOK    = desc("gpubridge_snapshot_part_up", "1 when a part of the last snapshot was read, 0 when it failed (its previous reading is kept).", "part")
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

// snapshotCollector exports the current snapshot (it never reads
// anything: a scrape costs the formatting only).
type snapshotCollector struct{ m *Metrics }

func (c snapshotCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descQuota, descAllocated, descInQuota, descBursting, descPending, descBooked, descUsage, descSpend,
		descUnpriced, descBudget, descCommitted, descLeft, descCap, descBookable, descPoolBook, descPoolAlloc, descFree, descAtRisk, descIngestLag, descSnapAge, descPartOK} {
		ch <- d
	}
}

// Collect exports the current snapshot's gauges (none before the
// first).
func (c snapshotCollector) Collect(ch chan<- prometheus.Metric) {
	l := c.m.live.Load()
	if l == nil {
		return
	}
	s := l.Current()
	if s == nil {
		return
	}
	g := gauges(func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	})
	g(descSnapAge, float64(s.At.Unix()))
	for _, p := range Parts {
		ok := 0.0
		if _, seen := s.PartAt[p]; seen && s.Errors[p] == "" {
			ok = 1
		}
		g(descPartOK, ok, p)
	}
	g.tenantUse(s)
	g.usage(s)
	g.budgets(s)
	g.pool(s)
	g.atRisk(s)
	if !s.IngestedThrough.IsZero() {
		g(descIngestLag, s.At.Sub(s.IngestedThrough).Seconds())
	}
}

// gauges sends one gauge of a description with its value and labels.
type gauges func(d *prometheus.Desc, v float64, labels ...string)

// tenantUse exports each tenant's quota and GPUs in use per type.
func (g gauges) tenantUse(s *Snapshot) {
	for _, t := range s.Tenants {
		for _, u := range s.Use[t.Name] {
			if u.Quota != nil {
				g(descQuota, float64(*u.Quota), t.Name, u.Type)
			}
			// Saturation needs every quota's use, zero included; the
			// other gauges are absent while zero (at 1,000 tenants of 5
			// types that is most of them).
			g(descInQuota, float64(u.InQuota), t.Name, u.Type)
			for _, x := range []struct {
				d *prometheus.Desc
				v int64
			}{{descAllocated, u.Allocated}, {descBursting, u.Bursting}, {descPending, u.Pending}, {descBooked, u.Booked}} {
				if x.v != 0 {
					g(x.d, float64(x.v), t.Name, u.Type)
				}
			}
		}
	}
}

// usage exports usage and spend per tenant and type (tiers and kinds
// summed); credits are spend of type creditType.
func (g gauges) usage(s *Snapshot) {
	type k struct{ tenant, typ string }
	secs, spend, unpriced := map[k]int64{}, map[k]int64{}, map[k]int64{}
	cur := s.Usage.Meta.Card.Currency
	for _, r := range s.Usage.Rows {
		if !r.HasTenant {
			continue
		}
		key := k{r.Tenant, r.Type}
		if r.IsCredit() {
			// An amount given back (health credits), not GPU time: it
			// lowers the tenant's spend, under its own type label.
			key.typ = creditType
			spend[key] += r.Amount.Units()
			continue
		}
		secs[key] += r.GPUSeconds
		if r.Rate < 0 {
			unpriced[key] += r.GPUSeconds
			continue
		}
		spend[key] += r.Amount.Units()
	}
	for key, v := range secs {
		g(descUsage, float64(v), key.tenant, key.typ)
		g(descSpend, float64(spend[key]), key.tenant, key.typ, cur)
		if n := unpriced[key]; n > 0 {
			g(descUnpriced, float64(n), key.tenant, key.typ)
		}
	}
	for key, v := range spend {
		if key.typ == creditType {
			g(descSpend, float64(v), key.tenant, key.typ, cur)
		}
	}
}

// budgets exports each tenant's on-demand budget, committed spend and
// what is left (tenants without a budget have none).
func (g gauges) budgets(s *Snapshot) {
	for _, t := range s.Plan.Tenants {
		if t.Budget == nil || t.BudgetErr != "" {
			continue
		}
		b := t.Budget.Units()
		g(descBudget, float64(b), t.Tenant, s.Plan.Currency)
		g(descCommitted, float64(t.Committed()), t.Tenant, s.Plan.Currency)
		g(descLeft, float64(b-t.Committed()), t.Tenant, s.Plan.Currency)
	}
}

// pool exports the pool's position per type.
func (g gauges) pool(s *Snapshot) {
	for _, p := range s.Pool {
		g(descCap, float64(p.Capacity), p.Type)
		g(descBookable, float64(p.Bookable), p.Type)
		g(descPoolBook, float64(p.Booked), p.Type)
		g(descPoolAlloc, float64(p.Allocated), p.Type)
		g(descFree, float64(p.Free), p.Type)
	}
}

// atRisk exports each tenant's bookings at risk (0 for every tenant
// without).
func (g gauges) atRisk(s *Snapshot) {
	atRisk := map[string]int{}
	for _, t := range s.Tenants {
		atRisk[t.Name] = 0
	}
	for _, b := range s.upcoming {
		if b.StateAt(s.At) == reserve.StateAtRisk {
			if _, ok := atRisk[b.Tenant]; ok {
				atRisk[b.Tenant]++
			}
		}
	}
	for tn, n := range atRisk {
		g(descAtRisk, float64(n), tn)
	}
}
