// Package store keeps bookings and maintenance windows (bridge/reserve's
// Store port): DB in gpubridge's MariaDB database (tables bookings,
// booking_locks, booking_maintenance, booking_placements; migrations
// 00400-00499 of internal/sqldb) through sqlx, and Memory for tests and
// tools. Both pass the same conformance suite.
//
// Atomic admission: DB.Atomic locks one booking_locks row per resource
// (cluster, "gpu:h100") with SELECT ... FOR UPDATE as the first statement of
// its transaction, so admissions that share a resource run one after the
// other, across processes and daemon replicas, and each sees the bookings
// the one before committed. Every change writes an audit_log row in the same
// transaction (object kinds "booking" and "maintenance").
//
// This package imports bridge/reserve and internal/sqldb, never the
// slurmrest client.
package store
