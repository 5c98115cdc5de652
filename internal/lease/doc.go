// Package lease is the one mechanism by which a gpubridge process claims
// something alone: the leader of a cluster, the writer lock of a cluster,
// the ledger lock of a cluster. A lease is a row of the leases table
// (migration 00195) with a holder, an epoch that only grows and an expiry
// in database time, taken, renewed and released in short transactions that
// write the row. It replaces MariaDB's GET_LOCK, which a Galera cluster
// refuses (error 1235) and which a server that does not replicate it would
// grant on two nodes at once.
//
// Why writes: Galera certifies optimistically, so a SELECT ... FOR UPDATE
// on one node does not block a transaction on another; two transactions
// that write the same row do conflict, and one of them fails at commit
// (1213). Take therefore always writes the row (insert, or update guarded
// by the epoch it read), and retries a conflict a few times: the retry
// sees the winner's row and loses cleanly (ErrHeld).
//
// Timing: a holder takes or renews at a local monotonic instant t; the
// database sets expires_at = its now + TTL, which is later than t. The
// holder treats the lease as its own only until t + RenewDeadline(TTL)
// (two thirds of the TTL), so it stops using it (Valid is false, Fence
// refuses, Keep reports the loss) before anyone else can take it, even if
// its renewals hang. Renewals run every RenewEvery(TTL) (a quarter of
// it), so one failed renewal is survived.
//
// Fencing: a write that only the holder may make calls Token.Fence (or
// FenceContext, for the tokens a context carries; sqldb.WithTx does so for
// every transaction) inside its own transaction: an UPDATE of the lease row that matches only the same
// holder, the same epoch and an unexpired lease. A paused or partitioned
// old holder that wakes up is refused there (ErrFenced): its transaction
// rolls back, the refusal is logged and counted (Fenced, exported by the
// daemon as gpubridge_lease_fenced_writes_total). Touching the row also
// makes it part of the transaction's writeset, so on Galera a fenced write
// and a concurrent take conflict at certification. Fence last, just before
// the commit: the fence holds the lease row's lock until the commit, and a
// renewal waits for it.
//
// This is an adapter (database/sql); it imports no feature and nothing of
// cmd/.
package lease
