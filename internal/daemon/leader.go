package daemon

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// LockName is the MariaDB user lock that elects the one writing replica.
const LockName = "gpubridge.leader"

// Leader holds a MariaDB GET_LOCK on a pinned connection. The lock lives
// exactly as long as that connection: if the database drops it, leadership
// is lost, which Held notices.
type Leader struct {
	db   *sql.DB
	conn *sql.Conn
	name string
}

// NewLeader prepares an election on db under name.
func NewLeader(db *sql.DB, name string) *Leader { return &Leader{db: db, name: name} }

// TryAcquire takes the lock if it is free. It returns false, nil when
// another replica holds it.
func (l *Leader) TryAcquire(ctx context.Context) (bool, error) {
	if l.conn == nil {
		c, err := l.db.Conn(ctx)
		if err != nil {
			return false, fmt.Errorf("leader lock: connect: %w", err)
		}
		l.conn = c
	}
	var got sql.NullInt64
	if err := l.conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", l.name).Scan(&got); err != nil {
		l.drop()
		return false, fmt.Errorf("leader lock: GET_LOCK: %w", err)
	}
	return got.Valid && got.Int64 == 1, nil
}

// Held reports whether this connection still holds the lock.
func (l *Leader) Held(ctx context.Context) bool {
	if l.conn == nil {
		return false
	}
	var mine sql.NullInt64
	err := l.conn.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?) = CONNECTION_ID()", l.name).Scan(&mine)
	if err != nil {
		l.drop()
		return false
	}
	return mine.Valid && mine.Int64 == 1
}

// Release gives the lock up and closes the pinned connection.
func (l *Leader) Release(ctx context.Context) {
	if l.conn == nil {
		return
	}
	_, _ = l.conn.ExecContext(ctx, "SELECT RELEASE_LOCK(?)", l.name)
	l.drop()
}

// drop discards the pinned connection. Closing a *sql.Conn would return it
// to the pool still holding the lock; returning driver.ErrBadConn from Raw
// makes database/sql close the underlying connection instead, so the server
// frees the lock.
func (l *Leader) drop() {
	if l.conn != nil {
		_ = l.conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = l.conn.Close()
		l.conn = nil
	}
}

// RunWhileLeader campaigns every interval and runs the scheduler only while
// the lock is held; it returns when ctx ends, after stopping the scheduler
// and releasing the lock.
func RunWhileLeader(ctx context.Context, l *Leader, s *Scheduler, m *Metrics, interval time.Duration, logger *slog.Logger) error {
	leading := false
	setLeading := func(v bool) {
		leading = v
		if m != nil {
			if v {
				m.leader.Set(1)
			} else {
				m.leader.Set(0)
			}
		}
	}
	defer func() {
		if leading {
			s.Stop()
		}
		l.Release(context.Background())
		setLeading(false)
	}()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		switch {
		case !leading:
			ok, err := l.TryAcquire(ctx)
			if err != nil && !errors.Is(err, context.Canceled) {
				logger.Warn("leader election failed", "err", err)
			}
			if ok {
				logger.Info("became leader; running periodic jobs")
				setLeading(true)
				s.Start(ctx)
			}
		case !l.Held(ctx):
			logger.Warn("lost leader lock; stopping periodic jobs")
			s.Stop()
			setLeading(false)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
