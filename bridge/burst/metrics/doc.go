// Package metrics exposes the burst controller's events as Prometheus
// collectors (burst.Recorder): moves, refusals by reason, failed moves,
// reaction time, and gauges of each tenant's on-demand GPUs and committed
// spend. It may import prometheus and burst; only cmd/ imports it.
package metrics
