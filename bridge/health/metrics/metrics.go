package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/check"
)

// Recorder implements health.Observer with Prometheus collectors:
//
//	gpubridge_health_nodes{state}                     nodes per lifecycle state, after the last cycle
//	gpubridge_health_check_results_total{check,verdict} check results
//	gpubridge_health_check_duration_seconds{check}    how long checks ran
type Recorder struct {
	nodes    *prometheus.GaugeVec
	results  *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

var _ health.Observer = (*Recorder)(nil)

// New registers the collectors on reg.
func New(reg prometheus.Registerer) *Recorder {
	r := &Recorder{
		nodes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gpubridge_health_nodes", Help: "Managed nodes per health lifecycle state (burn-in, serving, suspect, drained, requalify, external), after the last cycle.",
		}, []string{"state"}),
		results: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpubridge_health_check_results_total", Help: "Health check results, by check and verdict (pass, warn, fail).",
		}, []string{"check", "verdict"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "gpubridge_health_check_duration_seconds", Help: "How long health checks ran on their node, by check.",
			Buckets: []float64{1, 5, 15, 60, 300, 900, 1800, 3600, 7200},
		}, []string{"check"}),
	}
	reg.MustRegister(r.nodes, r.results, r.duration)
	for _, s := range health.States {
		r.nodes.WithLabelValues(string(s))
	}
	return r
}

// NodeStates sets the nodes per state (every state, zero included).
func (r *Recorder) NodeStates(counts map[health.State]int) {
	for _, s := range health.States {
		r.nodes.WithLabelValues(string(s)).Set(float64(counts[s]))
	}
}

// CheckResult counts one result and its duration (0: unknown, not
// observed).
func (r *Recorder) CheckResult(c string, v check.Verdict, d time.Duration) {
	r.results.WithLabelValues(c, string(v)).Inc()
	if d > 0 {
		r.duration.WithLabelValues(c).Observe(d.Seconds())
	}
}
