package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpubridge/gpubridge/bridge/health/credit"
)

// Recorder implements credit.Observer with Prometheus collectors:
//
//	gpubridge_health_credits_total{kind}                             credit lines written
//	gpubridge_health_credit_amount_minor_units_total{kind,currency}  minor units credited (positive)
//	gpubridge_health_credit_runs_total{result}                       runs of the credit job (ok, error)
//	gpubridge_health_credit_last_run_timestamp_seconds               when the job last succeeded
type Recorder struct {
	lines   *prometheus.CounterVec
	amount  *prometheus.CounterVec
	runs    *prometheus.CounterVec
	lastRun prometheus.Gauge
	now     func() time.Time
}

var _ credit.Observer = (*Recorder)(nil)

// New registers the collectors on reg.
func New(reg prometheus.Registerer) *Recorder {
	r := &Recorder{
		lines: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpubridge_health_credits_total", Help: "Node health credit lines written to the ledger, by kind (node-fail, killed-by-drain, booking-lost).",
		}, []string{"kind"}),
		amount: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpubridge_health_credit_amount_minor_units_total", Help: "Money credited by node health credit lines, in minor units of the currency (cents), by kind and currency.",
		}, []string{"kind", "currency"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpubridge_health_credit_runs_total", Help: "Runs of the node health credit job, by result (ok, error).",
		}, []string{"result"}),
		lastRun: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gpubridge_health_credit_last_run_timestamp_seconds", Help: "When the node health credit job last completed without error (Unix seconds).",
		}),
		now: time.Now,
	}
	reg.MustRegister(r.lines, r.amount, r.runs, r.lastRun)
	for _, k := range []credit.Kind{credit.NodeFail, credit.Killed, credit.BookingLost} {
		r.lines.WithLabelValues(string(k))
	}
	r.runs.WithLabelValues("ok")
	r.runs.WithLabelValues("error")
	return r
}

// Ran implements credit.Observer.
func (r *Recorder) Ran(written []credit.Credit, err error) {
	for _, c := range written {
		r.lines.WithLabelValues(string(c.Kind)).Inc()
		r.amount.WithLabelValues(string(c.Kind), c.Amount.Currency().Code).Add(float64(-c.Amount.Units()))
	}
	if err != nil {
		r.runs.WithLabelValues("error").Inc()
		return
	}
	r.runs.WithLabelValues("ok").Inc()
	r.lastRun.Set(float64(r.now().Unix()))
}
