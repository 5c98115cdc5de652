// Package daemon runs gpubridge's periodic jobs inside `gpubridge serve`:
// each Job is scheduled by robfig/cron/v3 with SkipIfStillRunning, only
// while this replica holds the MariaDB leader lock (GET_LOCK on a pinned
// connection), with per-job Prometheus metrics. It also serves /metrics and
// /healthz and tells systemd when it is ready (sd_notify).
//
// Feature packages provide jobs; this package knows none of them.
package daemon
