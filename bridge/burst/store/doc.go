// Package store keeps the burst controller's records in gpubridge's MariaDB
// database: burst_moves (insert-only, one row per move, keyed by cluster, job
// and the move time written in the job's marker) and burst_refusals (the
// quota-held jobs left pending by the last cycle, with their reason and
// since when). Migrations 00300-00399 in internal/sqldb create them.
//
// DB implements burst.Store and the reads `gpubridge show burst` and the
// tests need (Refusals, Moves); Memory is the in-memory store that passes
// the same conformance tests.
package store
