// Package metrics is the node health credit job's Prometheus collectors
// (credit lines and amounts written per kind, runs and their outcome), for
// the daemon to register. It implements credit.Observer; it imports
// bridge/health/credit and client_golang, and only cmd/ imports it.
package metrics
