// Package app is gpubridge's application layer: what the CLI, the daemon
// and the tenant API share to run a use case. An Env holds the
// configuration (loaded once, or bound to one configuration of the
// daemon), the logger, the clients it builds on first use (slurmrestd,
// gpubridge's database, slurmdbd's database), the Prometheus registry and
// the cluster's writer lock; the files beside env.go build each feature's
// services from it (tenants, bookings, health, accounting, burst).
//
// cmd/gpubridge parses a command's arguments, calls one function of this
// package (or of the service it returns) and prints the result; the
// daemon's jobs are built here too, so a command and the job that does the
// same work run the same code.
//
// It imports the feature packages and their adapters; only cmd/gpubridge
// imports it.
package app
