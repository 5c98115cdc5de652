package writerlock

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/gpubridge/gpubridge/internal/lease"
)

// ErrBusy: another writer held the lock for longer than the wait.
var ErrBusy = errors.New("another gpubridge writer holds the cluster's writer lock")

// DefaultTTL is the lease's time to live when Lock.TTL is zero: a writer
// that dies without releasing holds the lock this long at most.
const DefaultTTL = 15 * time.Second

// Name is the lease name of a cluster's writer (at most 64 characters, as
// the MariaDB named lock it replaces: a longer one is shortened with a
// digest).
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
	// TTL is the lease's time to live (DefaultTTL when zero); the lease is
	// renewed every quarter of it while held.
	TTL time.Duration
	// OnLost, when set, is called if the lease is lost while held (its
	// renewals failed past the renew deadline, or it was taken over).
	OnLost func(error)
}

// Acquire takes the lock, waiting at most l.Wait, and returns the function
// that releases it (safe to call more than once).
func (l *Lock) Acquire(ctx context.Context) (release func(), err error) {
	name := Name(l.Cluster)
	ttl := l.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	ls := lease.New(l.DB, name, lease.Options{Info: l.Holder, TTL: ttl})
	var onWait func(lease.Holder, time.Duration)
	if l.OnWait != nil {
		onWait = func(h lease.Holder, wait time.Duration) { l.OnWait(h.String(), wait) }
	}
	err = ls.TakeWithin(ctx, l.Wait, onWait)
	var held *lease.HeldError
	if errors.As(err, &held) {
		return nil, fmt.Errorf("%w (%s): held by %s; gave up after %s (reconcile.writerLockTimeout): try again when it is done",
			ErrBusy, name, held.Holder, l.Wait)
	}
	if err != nil {
		return nil, fmt.Errorf("writer lock %s: %w", name, err)
	}
	stop := ls.Keep(l.OnLost)
	released := false
	return func() {
		if released {
			return
		}
		released = true
		stop()
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ls.Release(rctx)
	}, nil
}
