package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/internal/lease"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// DB is the MariaDB ledger, on gpubridge's own database (migrations
// 00200-00299 of internal/sqldb).
//
// Lines are written with LOAD DATA LOCAL INFILE from memory (the driver's
// registered readers), the fastest way into InnoDB; a batch holding a name
// LOAD DATA would have to escape, or a server that refuses LOCAL INFILE,
// gets multi-row INSERTs instead. While this DB holds a cluster's ledger
// lock (a lease), every write of that cluster fences with the lease's
// epoch in its own transaction: once the lease is lost, the write fails
// with ErrLockLost, so nothing is ever written without the lock.
//
// Its files, by concern: this one (the store, its lock, its write
// transactions, the audit log), mariadb_lines.go (lines in and out),
// mariadb_batch.go (batches of finished runs and the watermark),
// mariadb_accruals.go (the running runs), mariadb_state.go (coverage,
// touched ranges, passes), mariadb_period.go (closed periods) and
// mariadb_credit.go (credits).
type DB struct {
	db  *sqlx.DB
	log *slog.Logger

	mu    sync.Mutex
	locks map[string]*heldLock // by cluster
	// insertOnly: LOAD DATA LOCAL INFILE was refused (or is off): lines
	// go in multi-row INSERTs.
	insertOnly atomic.Bool
}

// heldLock is a cluster's ledger lock: its lease and the epoch it was
// taken at.
type heldLock struct {
	mu    sync.Mutex // one write transaction at a time
	lease *lease.Lease
	token lease.Token
	stop  func() // ends the renewals
}

// NewDB returns the store on db (opened with sqldb.OpenMigrated).
func NewDB(db *sqlx.DB, log *slog.Logger) *DB {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &DB{db: db, log: log.With("component", "ledger"), locks: map[string]*heldLock{}}
}

// UseInserts makes the store write lines with multi-row INSERTs instead of
// LOAD DATA LOCAL INFILE (for servers with local_infile off, and tests).
func (d *DB) UseInserts(on bool) { d.insertOnly.Store(on) }

// q is what both *sqlx.DB and *sqlx.Tx offer.
type q interface {
	sqlx.ExtContext
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
	GetContext(ctx context.Context, dest any, query string, args ...any) error
}

// Audit writes one row of gpubridge's audit log about cluster's ledger
// (an operator's decision, such as accepting a gap of purged job rows).
func (d *DB) Audit(ctx context.Context, cluster string, at time.Time, actor, action, object string, details any) error {
	return d.withWrite(ctx, cluster, func(tx *sqlx.Tx) error {
		return sqldb.Audit(ctx, tx, at, actor, action, "ledger", object, nil, details)
	})
}

// Lock implements Store with the lease "gpubridge.ledger.<cluster>"
// (internal/lease), renewed in the background until release. Until then,
// every write of the cluster's ledger by this DB fences with the lease's
// epoch in its own transaction (withWrite): once the lease is lost (its
// renewals failed past the renew deadline, or another ingest or close
// took it after it expired), the write is refused with ErrLockLost and
// nothing more is written. A process that dies holds the lock until the
// lease's TTL (lockTTL) passes.
func (d *DB) Lock(ctx context.Context, cluster string, wait time.Duration) (func(), error) {
	ls := lease.New(d.db.DB, lockName(cluster), lease.Options{Info: lockInfo(cluster), TTL: lockTTL, Logger: d.log})
	err := ls.TakeWithin(ctx, wait, nil)
	if errors.Is(err, lease.ErrHeld) {
		return nil, fmt.Errorf("%w (cluster %s; waited %s): %v", ErrLocked, cluster, wait, err)
	}
	if err != nil {
		return nil, fmt.Errorf("ledger lock: %w", err)
	}
	l := &heldLock{lease: ls, token: ls.Token()}
	l.stop = ls.Keep(func(err error) {
		d.log.Warn("ledger lock lost; the next write is refused", "cluster", cluster, "err", err)
	})
	d.mu.Lock()
	d.locks[cluster] = l
	d.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			d.mu.Lock()
			if d.locks[cluster] == l {
				delete(d.locks, cluster)
			}
			d.mu.Unlock()
			l.mu.Lock()
			defer l.mu.Unlock()
			l.stop()
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = ls.Release(rctx)
		})
	}, nil
}

// lockTTL is the ledger lease's time to live: an ingest or close that dies
// holds the ledger this long at most (ingest waits 30 s for the lock).
const lockTTL = 15 * time.Second

func lockName(cluster string) string {
	name := "gpubridge.ledger." + cluster
	if len(name) > 64 {
		h := sha256.Sum256([]byte(cluster))
		name = "gpubridge.ledger." + hex.EncodeToString(h[:16])
	}
	return name
}

// lockInfo names the holder of a ledger lock for people.
func lockInfo(cluster string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("ledger of %s (pid %d on %s)", cluster, os.Getpid(), host)
}

// withWrite runs fn in a transaction that fences before it commits: with
// the ledger lease while this DB holds cluster's lock (writes without the
// lock, by tests and tools, do not), and (sqldb.WithTx) with every lease
// token ctx carries (the leader's, for the daemon's jobs). A refused fence of the
// ledger lease is ErrLockLost; the transaction writes nothing. The fence
// comes last so that the lease rows stay locked only until the commit,
// not for the whole write (a renewal waits for that lock).
func (d *DB) withWrite(ctx context.Context, cluster string, fn func(*sqlx.Tx) error) error {
	d.mu.Lock()
	l := d.locks[cluster]
	d.mu.Unlock()
	if l == nil {
		return sqldb.WithTx(ctx, d.db, fn)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.lease.Valid() {
		return fmt.Errorf("%w: %v", ErrLockLost, l.token.Fence(ctx, nil))
	}
	return sqldb.WithTx(ctx, d.db, func(tx *sqlx.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		if err := l.token.Fence(ctx, tx); err != nil {
			if errors.Is(err, lease.ErrFenced) {
				return fmt.Errorf("%w: %v", ErrLockLost, err)
			}
			return err
		}
		return nil
	})
}
