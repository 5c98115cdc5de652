// Package writerlock is the one-writer lock of a Slurm cluster: the
// MariaDB named lock `gpubridge-writer:<cluster>` on gpubridge's database,
// held on a pinned connection for as long as one writer changes the
// tenant store, Slurm or the guard file. The CLI's apply, modify, delete,
// add/delete user, import and burst run-once, and the daemon's reconcile
// and burst jobs take it, so they never interleave their reads and
// writes: what a writer planned from is what it changes.
//
// A writer waits a bounded time (config reconcile.writerLockTimeout) and
// then fails with ErrBusy naming the holder (written by the holder, on
// its pinned connection, into writer_lock_holders, migration 00190). The
// lock lives exactly as long as its connection: a writer that dies frees
// it. Released, the connection is discarded, never returned to the pool
// still holding the lock (like the leader lock in cmd/gpubridge/daemon).
//
// This is an adapter (database/sql); importers: cmd/gpubridge's wiring
// and the daemon.
package writerlock
