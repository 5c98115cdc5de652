// Package metrics exposes the booking projector's reports (reserve.Report)
// as Prometheus collectors: per GPU type and node class the bookable
// capacity, what bookings hold, what is free for bookings and the bookings
// at risk, at the last projection; bookings by state; projection runs and
// failed actions. It may import prometheus and bridge/reserve; only
// cmd/gpubridge (the daemon's bookings job) and tests import it.
package metrics
