package ledger

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// DB is the MariaDB ledger, on gpubridge's own database (migrations
// 00200-00299 of internal/sqldb).
//
// Lines are written with LOAD DATA LOCAL INFILE from memory (the driver's
// registered readers), the fastest way into InnoDB; a batch holding a name
// LOAD DATA would have to escape, or a server that refuses LOCAL INFILE,
// gets multi-row INSERTs instead. While this DB holds a cluster's ledger
// lock, every write of that cluster runs on the lock's own connection: if
// that connection breaks, the server drops the lock and the write fails
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

// heldLock is a cluster's ledger lock and the connection that holds it.
type heldLock struct {
	mu   sync.Mutex // one write transaction at a time on conn
	conn *sqlx.Conn
	name string
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

// Lock implements Store with a MariaDB named lock held on a dedicated
// connection: if the process dies, the server drops the connection and the
// lock. Until release, this DB writes the cluster's ledger on that same
// connection (withWrite), so a reset of it cannot leave an ingest writing
// without the lock.
func (d *DB) Lock(ctx context.Context, cluster string, wait time.Duration) (func(), error) {
	name := lockName(cluster)
	conn, err := d.db.Connx(ctx)
	if err != nil {
		return nil, fmt.Errorf("ledger lock: %w", err)
	}
	var got sql.NullInt64
	if err := conn.QueryRowxContext(ctx, "SELECT GET_LOCK(?, ?)", name, int(wait.Seconds())).Scan(&got); err != nil {
		conn.Close()
		return nil, fmt.Errorf("ledger lock: %w", err)
	}
	if got.Int64 != 1 {
		conn.Close()
		return nil, fmt.Errorf("%w (cluster %s; waited %s)", ErrLocked, cluster, wait)
	}
	l := &heldLock{conn: conn, name: name}
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
			_, _ = conn.ExecContext(context.Background(), "DO RELEASE_LOCK(?)", name)
			conn.Close()
		})
	}, nil
}

func lockName(cluster string) string {
	name := "gpubridge.ledger." + cluster
	if len(name) > 64 {
		h := sha256.Sum256([]byte(cluster))
		name = "gpubridge.ledger." + hex.EncodeToString(h[:16])
	}
	return name
}

// withWrite runs fn in a transaction: on the lock's connection while this
// DB holds cluster's lock, else on the pool (writes without the lock:
// tests and tools). A failure on the lock's connection that leaves it
// unusable is ErrLockLost: the server dropped the lock with it.
func (d *DB) withWrite(ctx context.Context, cluster string, fn func(*sqlx.Tx) error) error {
	d.mu.Lock()
	l := d.locks[cluster]
	d.mu.Unlock()
	if l == nil {
		return sqldb.WithTx(ctx, d.db, fn)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	err := withConnTx(ctx, l.conn, fn)
	if err != nil {
		pctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if perr := l.conn.PingContext(pctx); perr != nil {
			return fmt.Errorf("%w: %v", ErrLockLost, err)
		}
	}
	return err
}

// withConnTx is sqldb.WithTx on one connection.
func withConnTx(ctx context.Context, conn *sqlx.Conn, fn func(*sqlx.Tx) error) (err error) {
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
	}()
	if err = fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
