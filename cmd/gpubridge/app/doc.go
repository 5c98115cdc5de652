// Package app is gpubridge's application layer: what the CLI, the daemon
// and the tenant API share to run a use case. An Env holds the
// configuration (loaded once, or bound to one configuration of the
// daemon), the logger, the clients (made once, connecting at their first
// use: slurmrestd,
// gpubridge's database, slurmdbd's database), the Prometheus registry and
// the cluster's writer lock; the files beside env.go build each feature's
// services from it (tenants, bookings, health, accounting, burst).
//
// A use case (a method of Env) takes a typed request and returns a typed
// result; never the CLI's key=value map. cmd/gpubridge parses a command's
// arguments into the request with this package's Parse functions (which
// hold the texts of the input errors), calls the use case and prints the
// result. The booking and usage use cases on a service (BookingCases,
// UsageCases) are what the tenant API's ports are wired to as well, so a
// command and the route that does the same run the same code; the
// daemon's jobs are built here too, for the same reason.
//
// It imports the feature packages and their adapters; only cmd/gpubridge
// imports it.
package app
