// Package writerlock is the one-writer lock of a Slurm cluster: the lease
// `gpubridge-writer:<cluster>` (internal/lease) on gpubridge's database,
// held for as long as one writer changes the tenant store, Slurm or the
// guard file. The CLI's apply, modify, delete, add/delete user, import
// and burst run-once, and the daemon's reconcile and burst jobs take it,
// so they never interleave their reads and writes: what a writer planned
// from is what it changes.
//
// A writer waits a bounded time (config reconcile.writerLockTimeout) and
// then fails with ErrBusy naming the holder (the lease row's info and the
// time it was taken). While held, the lease is renewed in the background;
// a writer that dies without releasing it holds it until its TTL
// (DefaultTTL) passes. A lease, unlike the MariaDB named lock it replaces,
// works on a Galera cluster.
//
// This is an adapter (database/sql); importers: cmd/gpubridge's wiring
// and the daemon.
package writerlock
