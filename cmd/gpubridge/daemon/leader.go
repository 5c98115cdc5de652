package daemon

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpubridge/gpubridge/internal/lease"
)

// lockPrefix starts the name of the lease that elects the one writing
// replica of a cluster.
const lockPrefix = "gpubridge.leader."

// maxLockName keeps lease names as short as the MariaDB user locks they
// replace (64 characters).
const maxLockName = 64

// LockName is the leader lease of cluster: "gpubridge.leader.<cluster>".
// The cluster in the name lets the daemons of several clusters share one
// database, each electing its own leader. A name over 64 characters keeps
// a prefix of the cluster and ends in a hash of the whole.
func LockName(cluster string) string {
	name := lockPrefix + cluster
	if len(name) <= maxLockName {
		return name
	}
	h := sha256.Sum256([]byte(cluster))
	sum := hex.EncodeToString(h[:8])
	return name[:maxLockName-len(sum)-1] + "." + sum
}

// LeaseTTL is the leader lease's time to live for a campaign interval:
// one and a half intervals (3 s for the default 2 s), at least a second.
// The leader renews every quarter of it and stops its jobs when two
// thirds of it pass without a successful renewal (internal/lease); a
// standby retries as the lease expires, so a killed leader is replaced
// within about one TTL.
func LeaseTTL(interval time.Duration) time.Duration { return max(interval*3/2, time.Second) }

// Leader campaigns for a cluster's leader lease. It is built eagerly and
// resolves the database and the cluster's name at each campaign (the
// daemon starts while the database, or the slurmrestd that names the
// cluster, is down); a failed resolution is a failed campaign.
type Leader struct {
	db      func(ctx context.Context) (*sql.DB, error)
	cluster func(ctx context.Context) (string, error)
	ttl     time.Duration
	log     *slog.Logger

	lease   *lease.Lease  // of the last campaign that resolved; nil before
	pool    *sql.DB       // the pool lease was made on
	retryIn time.Duration // when the holder's lease expires, seen by the last campaign
}

// NewLeader prepares a campaign on the pool db returns for the lease of
// the cluster that cluster names, with the lease TTL ttl.
func NewLeader(db func(ctx context.Context) (*sql.DB, error), cluster func(ctx context.Context) (string, error), ttl time.Duration, logger *slog.Logger) *Leader {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Leader{db: db, cluster: cluster, ttl: ttl, log: logger}
}

// TryAcquire takes the lease if it is free or expired. It returns false,
// nil when another replica holds it.
func (l *Leader) TryAcquire(ctx context.Context) (bool, error) {
	if err := l.resolve(ctx); err != nil {
		return false, fmt.Errorf("leader lock: %w", err)
	}
	l.retryIn = 0
	err := l.lease.Take(ctx)
	var held *lease.HeldError
	if errors.As(err, &held) {
		l.retryIn = held.Holder.Left
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("leader lock: %w", err)
	}
	return true, nil
}

// resolve finds the pool and the cluster's name, and keeps the lease of
// the last campaign while they are the same (so that its holder may take
// it again at once).
func (l *Leader) resolve(ctx context.Context) error {
	cluster, err := l.cluster(ctx)
	if err != nil {
		return err
	}
	db, err := l.db(ctx)
	if err != nil {
		return err
	}
	if l.lease == nil || l.pool != db || l.lease.Name() != LockName(cluster) {
		host, _ := os.Hostname()
		info := fmt.Sprintf("gpubridge serve (pid %d on %s)", os.Getpid(), host)
		l.lease = lease.New(db, LockName(cluster), lease.Options{Info: info, TTL: l.ttl, Logger: l.log})
		l.pool = db
	}
	return nil
}

// Name is the lease's name ("" before the first resolved campaign).
func (l *Leader) Name() string {
	if l.lease == nil {
		return ""
	}
	return l.lease.Name()
}

// Token is the lease at its present epoch, for the fenced writes of the
// jobs that run under it.
func (l *Leader) Token() lease.Token {
	if l.lease == nil {
		return lease.Token{}
	}
	return l.lease.Token()
}

// Renew extends the lease; ErrLost (from internal/lease) when it was lost.
// Other errors leave it valid until its renew deadline.
func (l *Leader) Renew(ctx context.Context) error {
	if l.lease == nil {
		return lease.ErrLost
	}
	return l.lease.Renew(ctx)
}

// Valid reports whether the lease is held and its renew deadline not
// passed.
func (l *Leader) Valid() bool { return l.lease != nil && l.lease.Valid() }

// deadline is the lease's renew deadline (now when not held).
func (l *Leader) deadline() time.Time {
	if l.lease == nil {
		return time.Now()
	}
	return l.lease.Deadline()
}

// Release gives the lease up.
func (l *Leader) Release(ctx context.Context) {
	if l.lease != nil {
		_ = l.lease.Release(ctx)
	}
}

// fencedWrites exports lease.Fenced: the writes of this process refused
// because it no longer held the lease (leader, writer or ledger) they
// fenced with.
func fencedWrites() prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "gpubridge_lease_fenced_writes_total",
		Help: "Writes refused because this process no longer held the lease (leader, writer or ledger) they fenced with.",
	}, func() float64 { return float64(lease.Fenced()) })
}

// A campaign may have to connect first (up to sqldb.Open's 10 s ping);
// a renewal is bounded by the lease's renew deadline (it stops the jobs
// at the latest then); a release is quick or the database is in trouble.
const (
	campaignTimeout  = 15 * time.Second
	lockQueryTimeout = 5 * time.Second
)

// campaign is the state of RunWhileLeader between two ticks.
type campaign struct {
	l        *Leader
	s        *Scheduler
	m        *Metrics
	interval time.Duration
	logger   *slog.Logger
	leading  bool
	failing  string // the last election error logged, to log each change once
}

// RunWhileLeader campaigns every interval and runs the scheduler only while
// the lease is held: the jobs run under a context carrying the lease's
// token (their fenced writes check its epoch). While leading it renews
// every lease.RenewEvery(TTL); it stops the jobs when a renewal finds the
// lease lost or the renew deadline passes without a successful one. It
// returns when ctx ends, after stopping the scheduler and releasing the
// lease.
func RunWhileLeader(ctx context.Context, l *Leader, s *Scheduler, m *Metrics, interval time.Duration, logger *slog.Logger) error {
	c := &campaign{l: l, s: s, m: m, interval: interval, logger: logger}
	defer c.stop()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if c.leading {
			c.renew(ctx)
		} else {
			c.campaign(ctx)
		}
		t.Reset(c.next())
	}
}

// campaign tries to take the lease once and starts the jobs when it did.
func (c *campaign) campaign(ctx context.Context) {
	actx, cancel := context.WithTimeout(ctx, campaignTimeout)
	ok, err := c.l.TryAcquire(actx)
	cancel()
	switch {
	case err != nil && ctx.Err() == nil:
		if msg := err.Error(); msg != c.failing {
			c.logger.Warn("leader election failed; trying again", "every", c.interval, "err", err)
			c.failing = msg
		}
	case err == nil && c.failing != "":
		c.logger.Info("leader election works again")
		c.failing = ""
	}
	if ok {
		c.logger.Info("became leader; running periodic jobs", "lock", c.l.Name())
		c.setLeading(true)
		c.s.Start(lease.NewContext(ctx, c.l.Token()))
	}
}

// renew renews the lease once, within its renew deadline, and stops the
// jobs when the lease is lost, or its renew deadline passed (before this
// renewal, as after a pause of the process, or during it).
func (c *campaign) renew(ctx context.Context) {
	var err error
	if c.l.Valid() {
		rctx, cancel := context.WithDeadline(ctx, c.l.deadline())
		err = c.l.Renew(rctx)
		cancel()
		if ctx.Err() != nil {
			return // stopping, not lost
		}
		if err == nil {
			return
		}
		if !errors.Is(err, lease.ErrLost) && c.l.Valid() {
			c.logger.Warn("leader lease renewal failed; retrying until its renew deadline", "lock", c.l.Name(), "err", err)
			return
		}
	}
	c.logger.Warn("lost leader lock; stopping periodic jobs", "lock", c.l.Name(), "err", cmp.Or(err, errDeadline))
	c.s.Stop()
	c.setLeading(false)
}

// errDeadline: the renew deadline passed before a renewal was tried.
var errDeadline = errors.New("the lease's renew deadline passed before it was renewed")

// next is the wait before the next tick: a renewal interval while
// leading (or less, to stop the jobs at the renew deadline); else the
// campaign interval, or less when the holder's lease expires sooner (so
// that a standby takes over as it expires).
func (c *campaign) next() time.Duration {
	if c.leading {
		return max(min(lease.RenewEvery(c.l.ttl), time.Until(c.l.deadline())), time.Millisecond)
	}
	if r := c.l.retryIn; r > 0 && r < c.interval {
		return r + 10*time.Millisecond
	}
	return c.interval
}

// stop ends the jobs and gives the lease up (RunWhileLeader's end).
func (c *campaign) stop() {
	if c.leading {
		c.s.Stop()
	}
	rctx, cancel := context.WithTimeout(context.Background(), lockQueryTimeout)
	c.l.Release(rctx)
	cancel()
	c.setLeading(false)
}

func (c *campaign) setLeading(v bool) {
	c.leading = v
	if c.m != nil {
		if v {
			c.m.leader.Set(1)
		} else {
			c.m.leader.Set(0)
		}
	}
}
