package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpubridge/gpubridge/bridge/burst"
)

// Recorder implements burst.Recorder with Prometheus collectors.
type Recorder struct {
	moved      *prometheus.CounterVec
	movedGPUs  *prometheus.CounterVec
	refused    *prometheus.CounterVec
	failed     *prometheus.CounterVec
	reaction   prometheus.Histogram
	onDemand   *prometheus.GaugeVec
	committed  *prometheus.GaugeVec
	budget     *prometheus.GaugeVec
	refusing   *prometheus.GaugeVec
	ignored    *prometheus.GaugeVec
	lastTenant map[string]bool
}

var _ burst.Recorder = (*Recorder)(nil)

// New registers the collectors on reg.
func New(reg prometheus.Registerer) *Recorder {
	r := &Recorder{
		moved: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpubridge_burst_moved_total", Help: "Jobs moved to the on-demand tier, by tenant.",
		}, []string{"tenant"}),
		movedGPUs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpubridge_burst_moved_gpus_total", Help: "GPUs of the jobs moved to the on-demand tier, by tenant.",
		}, []string{"tenant"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpubridge_burst_refused_total", Help: "Quota-held jobs refused a move (counted once per job and reason), by tenant and reason (disabled, cap, budget, no-rate, opted-out, deferred).",
		}, []string{"tenant", "reason"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpubridge_burst_move_failures_total", Help: "Moves slurmctld refused, by tenant.",
		}, []string{"tenant"}),
		reaction: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "gpubridge_burst_reaction_seconds", Help: "Time from a job becoming eligible to its move to the on-demand tier.",
			Buckets: []float64{1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 900},
		}),
		onDemand: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gpubridge_burst_ondemand_gpus", Help: "GPUs a tenant holds or waits for in the on-demand tier, after the last cycle.",
		}, []string{"tenant"}),
		committed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gpubridge_burst_committed_minor_units", Help: "A tenant's on-demand spend this month, booked plus estimated in flight (minor currency units).",
		}, []string{"tenant"}),
		budget: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gpubridge_burst_budget_minor_units", Help: "A tenant's monthly on-demand budget (minor currency units); absent without a budget.",
		}, []string{"tenant"}),
		refusing: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gpubridge_burst_refused_jobs", Help: "Quota-held jobs left pending by the last cycle, by reason.",
		}, []string{"reason"}),
		ignored: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gpubridge_burst_ignored_jobs", Help: "Pending jobs that were no burst candidates in the last cycle, by reason (not-ours, not-quota-held, no-gpu).",
		}, []string{"reason"}),
		lastTenant: map[string]bool{},
	}
	reg.MustRegister(r.moved, r.movedGPUs, r.refused, r.failed, r.reaction, r.onDemand, r.committed, r.budget, r.refusing, r.ignored)
	return r
}

// Moved implements burst.Recorder.
func (r *Recorder) Moved(tenant string, gpus int64, reaction time.Duration) {
	r.moved.WithLabelValues(tenant).Inc()
	r.movedGPUs.WithLabelValues(tenant).Add(float64(gpus))
	r.reaction.Observe(max(reaction, 0).Seconds())
}

// Refused implements burst.Recorder.
func (r *Recorder) Refused(tenant string, reason burst.Reason) {
	r.refused.WithLabelValues(tenant, string(reason)).Inc()
}

// MoveFailed implements burst.Recorder.
func (r *Recorder) MoveFailed(tenant string) { r.failed.WithLabelValues(tenant).Inc() }

// Observe implements burst.Recorder: the gauges follow the last plan.
func (r *Recorder) Observe(p burst.Plan) {
	seen := map[string]bool{}
	for _, t := range p.Tenants {
		seen[t.Tenant] = true
		r.onDemand.WithLabelValues(t.Tenant).Set(float64(t.OnDemandGPUs + t.MovedGPUs))
		r.committed.WithLabelValues(t.Tenant).Set(float64(t.Committed()))
		if t.Budget != nil && t.BudgetErr == "" {
			r.budget.WithLabelValues(t.Tenant).Set(float64(t.Budget.Units()))
		} else {
			r.budget.DeleteLabelValues(t.Tenant)
		}
	}
	for t := range r.lastTenant {
		if !seen[t] {
			r.onDemand.DeleteLabelValues(t)
			r.committed.DeleteLabelValues(t)
			r.budget.DeleteLabelValues(t)
		}
	}
	r.lastTenant = seen
	counts := map[burst.Reason]int{}
	for _, x := range p.Refusals {
		counts[x.Reason]++
	}
	for _, reason := range burst.Refusals {
		r.refusing.WithLabelValues(string(reason)).Set(float64(counts[reason]))
	}
	for _, reason := range []burst.Reason{burst.NotOurs, burst.NotQuotaHeld, burst.NoGPU} {
		r.ignored.WithLabelValues(string(reason)).Set(float64(p.Ignored[reason]))
	}
}
