// Package metrics is the health service's Prometheus collectors (nodes per
// lifecycle state, check results and durations), for the daemon to
// register. It imports bridge/health and client_golang; only cmd/ imports
// it.
package metrics
