package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// Recorder turns projection reports into gauges and counters.
type Recorder struct {
	capacity *prometheus.GaugeVec
	booked   *prometheus.GaugeVec
	free     *prometheus.GaugeVec
	atRisk   *prometheus.GaugeVec
	states   *prometheus.GaugeVec
	runs     *prometheus.CounterVec
	failed   prometheus.Counter
	last     prometheus.Gauge
	// unprojected: bookings the ledger admitted and Slurm does not hold.
	unprojected prometheus.Gauge
	seen        map[string]bool // resources given a series
}

// New registers the collectors on reg. Every state starts at 0.
func New(reg prometheus.Registerer) *Recorder {
	labels := []string{"resource", "type"}
	r := &Recorder{
		capacity: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gpubridge_bookings_capacity",
			Help: "Bookable capacity now per GPU type (GPUs) or node class (nodes): the pool less down or drained nodes, maintenance, other reservations and bookings.unbookablePercent, at the last projection.",
		}, labels),
		booked: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gpubridge_bookings_booked",
			Help: "What bookings hold now per GPU type or node class (the larger of the booking and its Slurm reservation), at the last projection.",
		}, labels),
		free: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gpubridge_bookings_free",
			Help: "Capacity free for bookings now per GPU type or node class (capacity less booked, at least 0), at the last projection.",
		}, labels),
		atRisk: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gpubridge_bookings_at_risk",
			Help: "Bookings at risk per GPU type or node class (a node under them down or drained, Slurm without room, no reservation at the start), at the last projection.",
		}, labels),
		states: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gpubridge_bookings",
			Help: "Bookings the last projection looked at, by state.",
		}, []string{"state"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpubridge_bookings_projections_total",
			Help: "Projection runs, by result (ok, failed: an action failed or the cluster or store could not be read).",
		}, []string{"result"}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gpubridge_bookings_failed_actions_total",
			Help: "Reservation actions that failed (Slurm refusing for now, jobs inside or no room, is not a failure).",
		}),
		last: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gpubridge_bookings_last_projection_timestamp_seconds",
			Help: "When the last projection that read the cluster ran (Unix time).",
		}),
		unprojected: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gpubridge_bookings_unprojected",
			Help: "Bookings whose reservation Slurm has no room for after the last projection (even with the reservations that have not started moved off fragmented GPUs): admitted, not held; each is at risk with why.",
		}),
		seen: map[string]bool{},
	}
	for _, s := range reserve.States {
		r.states.WithLabelValues(string(s))
	}
	for _, res := range []string{"ok", "failed"} {
		r.runs.WithLabelValues(res)
	}
	reg.MustRegister(r.capacity, r.booked, r.free, r.atRisk, r.states, r.runs, r.failed, r.last, r.unprojected)
	return r
}

// Observe records one projection's report and error. A run that could
// not read the cluster (no report time) leaves the gauges as they were.
func (r *Recorder) Observe(rep reserve.Report, err error) {
	result := "ok"
	if err != nil {
		result = "failed"
	}
	r.runs.WithLabelValues(result).Inc()
	r.failed.Add(float64(rep.Failed()))
	if len(rep.Now) == 0 && err != nil {
		return
	}
	now := map[string]bool{}
	for _, n := range rep.Now {
		res := string(n.Resource)
		now[res] = true
		r.capacity.WithLabelValues(res, n.Type).Set(float64(n.Capacity))
		r.booked.WithLabelValues(res, n.Type).Set(float64(n.Booked))
		r.free.WithLabelValues(res, n.Type).Set(float64(n.Free))
		r.atRisk.WithLabelValues(res, n.Type).Set(float64(n.AtRisk))
	}
	// A type that left the pool loses its series.
	for res := range r.seen {
		if !now[res] {
			_, typ := reserve.Resource(res).Split()
			for _, g := range []*prometheus.GaugeVec{r.capacity, r.booked, r.free, r.atRisk} {
				g.DeleteLabelValues(res, typ)
			}
		}
	}
	r.seen = now
	for _, s := range reserve.States {
		r.states.WithLabelValues(string(s)).Set(float64(rep.States[s]))
	}
	r.unprojected.Set(float64(len(rep.Unprojected)))
	r.last.Set(float64(rep.At.Unix()))
}
