// Package storetest makes scratch databases for tests and benchmarks of the
// booking store: a fresh, migrated MariaDB database per caller, dropped
// afterwards, so that runs never see each other's bookings.
package storetest
