// Package daemon is the lifecycle of `gpubridge serve`: Run owns the
// process's signals (SIGINT/SIGTERM stop, SIGHUP reloads), the HTTP server
// (/metrics, /healthz liveness, /readyz readiness; timeouts, size limits,
// TLS, no plain HTTP off loopback unless allowed), the cluster's leader
// lock (a lease named after the cluster, internal/lease, whose token the
// jobs' fenced writes carry), the cron scheduler (robfig/cron/v3,
// SkipIfStillRunning, per-job Prometheus metrics) and the graceful stop
// with a deadline. It tells systemd when it is ready, reloading and
// stopping (sd_notify).
//
// Each configuration runs as one generation: its clients (a clients.Set,
// none connecting before its first use) and its readiness Checker (cached,
// time-bounded probes) at once; then, once the cluster's name is resolved
// (at once when cluster: names it, else asked of slurmrestd until it
// answers), its app and jobs, built as plain values on that name, and its
// leader campaign. A job that fails runs again at its next tick. A reload
// prepares the next generation and checks everything it needs before it
// stops the running one; the clients whose settings did not change are
// shared, the others closed.
//
// Jobs come from the command through Options.Jobs: this package knows no
// feature. It imports the configuration, the clients and the adapters they
// return, and is imported by cmd/gpubridge only.
package daemon
