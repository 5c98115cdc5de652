// Package reservetest holds reference implementations of the booking
// calendar's queries (a naive scan over every commitment at every instant
// asked), used by the property tests to check the calendar and by the
// benchmarks as the baseline; and generators of synthetic bookings.
package reservetest
