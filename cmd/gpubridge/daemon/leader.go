package daemon

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"
)

// lockPrefix starts the name of the MariaDB user lock that elects the one
// writing replica of a cluster.
const lockPrefix = "gpubridge.leader."

// maxLockName is MariaDB's limit on a user lock's name.
const maxLockName = 64

// LockName is the leader lock of cluster: "gpubridge.leader.<cluster>".
// User locks are server-wide, so the cluster in the name lets the daemons
// of several clusters share one MariaDB server, each electing its own
// leader. A name over MariaDB's 64 characters keeps a prefix of the
// cluster and ends in a hash of the whole.
func LockName(cluster string) string {
	name := lockPrefix + cluster
	if len(name) <= maxLockName {
		return name
	}
	h := sha256.Sum256([]byte(cluster))
	sum := hex.EncodeToString(h[:8])
	return name[:maxLockName-len(sum)-1] + "." + sum
}

// Leader holds a MariaDB GET_LOCK on a pinned connection. The lock lives
// exactly as long as that connection: if the database drops it, leadership
// is lost, which Held notices.
type Leader struct {
	open func(ctx context.Context) (*sql.DB, string, error)
	conn *sql.Conn
	name string
}

// NewLeader prepares an election on db under name.
func NewLeader(db *sql.DB, name string) *Leader {
	return &Leader{open: func(context.Context) (*sql.DB, string, error) { return db, name, nil }}
}

// NewLazyLeader prepares an election whose database and lock name are
// found at the first campaign (and again after a failed one): the
// daemon starts while the database, or the slurmrestd that names the
// cluster, is down.
func NewLazyLeader(open func(ctx context.Context) (db *sql.DB, lockName string, err error)) *Leader {
	return &Leader{open: open}
}

// TryAcquire takes the lock if it is free. It returns false, nil when
// another replica holds it.
func (l *Leader) TryAcquire(ctx context.Context) (bool, error) {
	if l.conn == nil {
		db, name, err := l.open(ctx)
		if err != nil {
			return false, fmt.Errorf("leader lock: %w", err)
		}
		c, err := db.Conn(ctx)
		if err != nil {
			return false, fmt.Errorf("leader lock: connect: %w", err)
		}
		l.conn, l.name = c, name
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

// A campaign may have to connect first (up to sqldb.Open's 10 s ping);
// the other lock queries are quick or the database is in trouble, and a
// check that does not answer counts as a lost lock (jobs stop: the safe
// side).
const (
	campaignTimeout  = 15 * time.Second
	lockQueryTimeout = 5 * time.Second
)

func held(ctx context.Context, l *Leader) bool {
	ctx, cancel := context.WithTimeout(ctx, lockQueryTimeout)
	defer cancel()
	return l.Held(ctx)
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
		rctx, cancel := context.WithTimeout(context.Background(), lockQueryTimeout)
		l.Release(rctx)
		cancel()
		setLeading(false)
	}()
	t := time.NewTicker(interval)
	defer t.Stop()
	var failing string // the last election error logged, to log each change once
	for {
		switch {
		case !leading:
			actx, cancel := context.WithTimeout(ctx, campaignTimeout)
			ok, err := l.TryAcquire(actx)
			cancel()
			switch {
			case err != nil && ctx.Err() == nil:
				if msg := err.Error(); msg != failing {
					logger.Warn("leader election failed; trying again", "every", interval, "err", err)
					failing = msg
				}
			case err == nil && failing != "":
				logger.Info("leader election works again")
				failing = ""
			}
			if ok {
				logger.Info("became leader; running periodic jobs", "lock", l.name)
				setLeading(true)
				s.Start(ctx)
			}
		case !held(ctx, l):
			if ctx.Err() != nil {
				return nil // stopping, not lost
			}
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
