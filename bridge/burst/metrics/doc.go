// Package metrics exposes the burst controller's events as Prometheus
// collectors (a burst.Recorder): moves, refusals by reason, failed moves,
// reaction time, and gauges of each tenant's on-demand GPUs, committed
// spend and budget, and of the last cycle's refused and ignored jobs by
// reason.
package metrics
