// Package metrics exposes the burst controller's events as Prometheus
// collectors (a burst.Recorder): moves, refusals by reason, failed moves,
// reaction time, and gauges of each tenant's on-demand GPUs, committed
// spend and budget, and of the last cycle's refused and ignored jobs by
// reason. It may import prometheus and burst; only cmd/ (the daemon's burst
// job) and tests import it.
package metrics
