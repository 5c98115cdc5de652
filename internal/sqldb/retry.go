package sqldb

import (
	"context"
	"database/sql/driver"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// ErrRetriesExhausted wraps the last error of a transaction that kept
// meeting a transient conflict (Galera certification, deadlock, a node
// not ready) through every attempt WithTx allows. Nothing of it was
// committed.
var ErrRetriesExhausted = errors.New("the database kept refusing the transaction as a conflict; nothing was stored, try again")

// Retry is the bound on WithTx's attempts and its backoff: attempt n
// (n >= 1) waits a random time in [0, min(Max, Base·2^(n-1))] (full
// jitter, so that two writers that just conflicted do not meet again).
type Retry struct {
	Attempts  int
	Base, Max time.Duration
}

// DefaultRetry is WithTx's bound: 10 attempts, waits of at most 10, 20,
// 40, ... 640 ms, then 1 s (3.3 s in all at worst; 50 clients booking
// one GPU type through three Galera nodes at once needed up to 7).
var DefaultRetry = Retry{Attempts: 10, Base: 10 * time.Millisecond, Max: time.Second}

// Backoff is the longest wait before attempt try+1 (try >= 1).
func (r Retry) Backoff(try int) time.Duration {
	d := r.Base
	for i := 1; i < try && d < r.Max; i++ {
		d *= 2
	}
	return min(d, r.Max)
}

// wait sleeps a random time up to Backoff(try), or until ctx ends
// (false).
func (r Retry) wait(ctx context.Context, try int) bool {
	d := time.Duration(rand.Int64N(int64(r.Backoff(try)) + 1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Conflict classifies err, the failure of a whole transaction attempt:
// the reason it may succeed when run again from the start ("" when it
// would not, or when err is nil). A transaction failed this way committed
// nothing:
//   - "deadlock" (1213): InnoDB chose it as a deadlock's victim, or Galera
//     aborted it at commit because a transaction certified first on
//     another node wrote one of its rows ("Deadlock found when trying to
//     get lock; try restarting transaction", wsrep's certification
//     failure and brute-force abort);
//   - "lock wait timeout" (1205);
//   - "snapshot changed" (1020: a row it read changed since its snapshot,
//     innodb_snapshot_isolation);
//   - "node not ready" (1047: "WSREP has not yet prepared node for
//     application use": the node is joining or lost its cluster's
//     quorum; the connection is dropped so that the next attempt connects
//     again, to another node when the DSN lists several).
//   - "aborted silently" (errAborted: the server rolled the transaction
//     back without reporting it; see withTxOnce).
//
// A duplicate key (1062) is an answer, not a conflict: not retried.
func Conflict(err error) string {
	if errors.Is(err, errAborted) {
		return "aborted silently"
	}
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return ""
	}
	switch me.Number {
	case 1213:
		return "deadlock"
	case 1205:
		return "lock wait timeout"
	case 1020:
		return "snapshot changed"
	case 1047:
		return "node not ready"
	}
	return ""
}

// lostConn reports a connection lost (the node went away) while the
// transaction ran, before its commit: nothing was committed, so it is
// retried on a new connection. A connection lost during the commit is
// never retried: the commit may have happened.
func lostConn(err error) bool {
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn)
}

// retries counts WithTx's retried attempts, by reason.
var retries struct {
	deadlock, lockWait, snapshot, notReady, lostConn, aborted atomic.Uint64
}

// Retries are the transaction attempts this process ran again, by reason
// (see Conflict; "connection lost" for a node lost before the commit).
func Retries() map[string]uint64 {
	return map[string]uint64{
		"deadlock":          retries.deadlock.Load(),
		"lock wait timeout": retries.lockWait.Load(),
		"snapshot changed":  retries.snapshot.Load(),
		"node not ready":    retries.notReady.Load(),
		"connection lost":   retries.lostConn.Load(),
		"aborted silently":  retries.aborted.Load(),
	}
}

// count adds one retry for reason.
func count(reason string) {
	switch reason {
	case "deadlock":
		retries.deadlock.Add(1)
	case "lock wait timeout":
		retries.lockWait.Add(1)
	case "snapshot changed":
		retries.snapshot.Add(1)
	case "node not ready":
		retries.notReady.Add(1)
	case "connection lost":
		retries.lostConn.Add(1)
	case "aborted silently":
		retries.aborted.Add(1)
	}
}

type commitFaultKey struct{}

type commitFault struct {
	fault      func() error
	rolledBack func()
}

// WithCommitFault returns ctx under which every WithTx commit first calls
// fault: an error it returns fails that commit as the database would (the
// transaction is rolled back; a conflict such as a 1213 is run again),
// and rolledBack, when not nil, runs once the attempt is rolled back (to
// commit the competing write of "another node" through another
// connection, say). For tests that inject a Galera conflict into a store
// on a real server and check that what the store returns is one
// attempt's result, fn running more than once.
func WithCommitFault(ctx context.Context, fault func() error, rolledBack func()) context.Context {
	return context.WithValue(ctx, commitFaultKey{}, commitFault{fault: fault, rolledBack: rolledBack})
}
