package writerlock

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// ErrBusy: another writer held the lock for longer than the wait.
var ErrBusy = errors.New("another gpubridge writer holds the cluster's writer lock")

// Name is the MariaDB lock name of a cluster's writer (MariaDB limits lock
// names to 64 characters; a longer one is shortened with a digest).
func Name(cluster string) string {
	n := "gpubridge-writer:" + cluster
	if len(n) <= 64 {
		return n
	}
	sum := sha256.Sum256([]byte(cluster))
	return "gpubridge-writer:" + cluster[:30] + "~" + hex.EncodeToString(sum[:8])
}

// Lock acquires a cluster's writer lock.
type Lock struct {
	DB      *sql.DB
	Cluster string
	// Holder says who takes the lock, for the message of a writer that
	// waits: "gpubridge apply by alice (pid 4242 on head1)".
	Holder string
	// Wait bounds how long Acquire waits for the lock.
	Wait time.Duration
	// OnWait, when set, is called once when the lock is held by someone
	// else, with the holder, before waiting for it.
	OnWait func(holder string, wait time.Duration)
}

// Acquire takes the lock, waiting at most l.Wait, and returns the function
// that releases it (safe to call more than once).
func (l *Lock) Acquire(ctx context.Context) (release func(), err error) {
	name := Name(l.Cluster)
	conn, err := l.DB.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("writer lock %s: connect: %w", name, err)
	}
	got, err := getLock(ctx, conn, name, 0)
	if err == nil && !got {
		holder := l.holder(ctx, conn, name)
		if l.OnWait != nil {
			l.OnWait(holder, l.Wait)
		}
		got, err = getLock(ctx, conn, name, l.Wait)
		if err == nil && !got {
			drop(conn)
			return nil, fmt.Errorf("%w (%s): held by %s; gave up after %s (reconcile.writerLockTimeout): try again when it is done",
				ErrBusy, name, l.holder(ctx, l.DB, name), l.Wait)
		}
	}
	if err != nil {
		drop(conn)
		return nil, fmt.Errorf("writer lock %s: GET_LOCK: %w", name, err)
	}
	// Best effort: a database without the table still locks.
	_, _ = conn.ExecContext(ctx, `REPLACE INTO writer_lock_holders (lock_name, connection_id, holder, acquired_at)
		VALUES (?, CONNECTION_ID(), ?, UTC_TIMESTAMP(6))`, name, truncate(l.Holder, 255))
	released := false
	return func() {
		if released {
			return
		}
		released = true
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = conn.ExecContext(rctx, `DELETE FROM writer_lock_holders WHERE lock_name = ? AND connection_id = CONNECTION_ID()`, name)
		_, _ = conn.ExecContext(rctx, `SELECT RELEASE_LOCK(?)`, name)
		drop(conn)
	}, nil
}

func getLock(ctx context.Context, conn *sql.Conn, name string, wait time.Duration) (bool, error) {
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, `SELECT GET_LOCK(?, ?)`, name, wait.Seconds()).Scan(&got); err != nil {
		return false, err
	}
	return got.Valid && got.Int64 == 1, nil
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// holder describes who holds the lock now.
func (l *Lock) holder(ctx context.Context, q queryer, name string) string {
	var id sql.NullInt64
	if err := q.QueryRowContext(ctx, `SELECT IS_USED_LOCK(?)`, name).Scan(&id); err != nil || !id.Valid {
		return "another writer"
	}
	var who string
	var since time.Time
	err := q.QueryRowContext(ctx, `SELECT holder, acquired_at FROM writer_lock_holders WHERE lock_name = ? AND connection_id = ?`, name, id.Int64).Scan(&who, &since)
	if err != nil {
		return fmt.Sprintf("another writer (MariaDB connection %d)", id.Int64)
	}
	return fmt.Sprintf("%s since %s", who, since.UTC().Format("2006-01-02T15:04:05Z"))
}

// drop discards the pinned connection: returning driver.ErrBadConn from
// Raw makes database/sql close it instead of pooling it, so the server
// frees the lock if RELEASE_LOCK did not.
func drop(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
