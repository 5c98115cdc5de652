// Package reservetest holds what the booking package's tests and
// benchmarks share: reference implementations of the calendar's queries
// (Naive: a scan over every commitment at every instant asked), checked
// against the calendar by the property tests and timed as the benchmarks'
// baseline; generators of synthetic years of bookings (Synth); and
// FakeSlurm, an in-memory slurmctld for the projector's tests.
package reservetest
