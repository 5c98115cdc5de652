package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
)

// Recorder counts refused plans.
type Recorder struct {
	refusals *prometheus.CounterVec
}

// New registers the collectors on reg. Every reason starts at 0, so a
// dashboard sees the series before the first refusal.
func New(reg prometheus.Registerer) *Recorder {
	r := &Recorder{
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpubridge_reconcile_refusals_total",
			Help: "Plans refused by the delete policy, by reason (unrecorded: deletes objects the store has no record of; all: deletes every tenant; share: more than reconcile.maxDeleteShare).",
		}, []string{"reason"}),
	}
	for _, reason := range reconcile.Reasons {
		r.refusals.WithLabelValues(reason)
	}
	reg.MustRegister(r.refusals)
	return r
}

// Refused counts one refused plan.
func (r *Recorder) Refused(reason string) { r.refusals.WithLabelValues(reason).Inc() }
