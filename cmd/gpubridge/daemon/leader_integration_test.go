//go:build integration

package daemon

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/internal/lease"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// leaderOn is a Leader of cluster on a pool of its own (a replica).
func leaderOn(t *testing.T, cluster string, ttl time.Duration) (*Leader, *sql.DB) {
	t.Helper()
	env := testbed.Require(t)
	db, err := sqldb.OpenMigrated(context.Background(), env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	l := NewLeader(func(context.Context) (*sql.DB, error) { return db.DB, nil },
		func(context.Context) (string, error) { return cluster, nil }, ttl, nil)
	return l, db.DB
}

// Two replicas on the real MariaDB: exactly one leads; when it dies
// (stops renewing) the other takes over once its lease expires, with a
// greater epoch; a released lease is free at once.
func TestLeaderElection(t *testing.T) {
	ctx := context.Background()
	cluster := fmt.Sprintf("test-leader-%06d", rand.IntN(1e6)) // a run of its own
	a, dbA := leaderOn(t, cluster, time.Second)
	b, _ := leaderOn(t, cluster, time.Second)
	if ok, err := a.TryAcquire(ctx); err != nil || !ok {
		t.Fatalf("a: acquire = %v, %v; want true", ok, err)
	}
	if ok, err := b.TryAcquire(ctx); err != nil || ok {
		t.Fatalf("b: acquire while a leads = %v, %v; want false", ok, err)
	}
	if b.retryIn <= 0 || b.retryIn > time.Second {
		t.Errorf("b retries in %s; want within a's 1 s TTL", b.retryIn)
	}
	if !a.Valid() || b.Valid() {
		t.Fatalf("valid: a=%v b=%v; want a only", a.Valid(), b.Valid())
	}
	first := a.Token().Epoch()
	// a dies: nothing renews its lease. b keeps campaigning, as
	// RunWhileLeader does, and leads once the lease expired.
	dbA.Close()
	t0 := time.Now()
	for {
		ok, err := b.TryAcquire(ctx)
		if err != nil {
			t.Fatalf("b: acquire after a died: %v", err)
		}
		if ok {
			break
		}
		if time.Since(t0) > 3*time.Second {
			t.Fatal("b: the lease is not free 3 s after a died (TTL 1 s)")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if a.Valid() {
		t.Error("a still counts itself leader past its renew deadline")
	}
	if e := b.Token().Epoch(); e != first+1 {
		t.Errorf("b's epoch %d; want %d", e, first+1)
	}
	if err := a.Renew(ctx); err == nil {
		t.Error("a's renewal after b took over succeeded")
	}
	b.Release(ctx)
	if b.Valid() {
		t.Fatal("b still valid after Release")
	}
	c, _ := leaderOn(t, cluster, time.Second)
	if ok, err := c.TryAcquire(ctx); err != nil || !ok {
		t.Fatalf("c after b released: %v, %v; want leader at once", ok, err)
	}
}

// The leader lease is per cluster: on one database the daemons of two
// clusters both lead, while two replicas of one cluster still exclude
// each other. A campaign whose cluster name cannot be resolved fails and
// is retried.
func TestLeaderPerCluster(t *testing.T) {
	ctx := context.Background()
	suffix := fmt.Sprintf("%06d", rand.IntN(1e6))
	a1, _ := leaderOn(t, "it-a-"+suffix, 10*time.Second)
	a2, _ := leaderOn(t, "it-a-"+suffix, 10*time.Second)
	b, _ := leaderOn(t, "it-b-"+suffix, 10*time.Second)
	defer a1.Release(ctx)
	defer a2.Release(ctx)
	defer b.Release(ctx)
	if ok, err := a1.TryAcquire(ctx); err != nil || !ok {
		t.Fatalf("cluster a, replica 1: %v, %v; want leader", ok, err)
	}
	if ok, err := b.TryAcquire(ctx); err != nil || !ok {
		t.Fatalf("cluster b while a leads: %v, %v; want leader (its own lease)", ok, err)
	}
	if ok, err := a2.TryAcquire(ctx); err != nil || ok {
		t.Fatalf("cluster a, replica 2: %v, %v; want refused", ok, err)
	}
	down := errors.New("slurmrestd down")
	u := NewLeader(func(context.Context) (*sql.DB, error) {
		t.Fatal("connected before naming the cluster")
		return nil, nil
	},
		func(context.Context) (string, error) { return "", down }, time.Second, nil)
	if ok, err := u.TryAcquire(ctx); ok || !errors.Is(err, down) {
		t.Fatalf("campaign with an unknown cluster: %v, %v", ok, err)
	}
}

// RunWhileLeader, two replicas: the standby's campaign takes over within
// about one TTL of the leader's lease being taken away (a pause past it),
// and the old leader stops its jobs; its jobs' fenced writes are refused
// from then on.
func TestRunWhileLeaderStopsWhenLost(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cluster := fmt.Sprintf("test-run-%06d", rand.IntN(1e6))
	a, db := leaderOn(t, cluster, time.Second)
	tokens := make(chan lease.Token, 1)
	sched, err := NewScheduler([]Scheduled{{Spec: "@every 1h", Job: Func("probe", func(ctx context.Context) error {
		tokens <- tokenOf(ctx)
		<-ctx.Done()
		return nil
	})}}, quiet(), nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = RunWhileLeader(ctx, a, sched, nil, 200*time.Millisecond, quiet()); close(done) }()
	var tok lease.Token
	select {
	case tok = <-tokens:
	case <-time.After(5 * time.Second):
		t.Fatal("a did not lead within 5 s")
	}
	if err := fenceOnce(ctx, db, tok); err != nil {
		t.Fatalf("the leader's fenced write: %v", err)
	}
	// Another replica takes the lease behind a's back (a was paused past
	// its TTL): a's next renewal finds it lost and stops the job.
	if _, err := db.Exec(`UPDATE leases SET holder = 'other', epoch = epoch + 1 WHERE name = ?`, LockName(cluster)); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	for len(sched.Running()) > 0 {
		if time.Since(t0) > 2*time.Second {
			t.Fatal("the job still runs 2 s after the lease was lost")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := fenceOnce(ctx, db, tok); !errors.Is(err, lease.ErrFenced) {
		t.Fatalf("the old leader's fenced write: %v, want ErrFenced", err)
	}
	cancel()
	<-done
}

// tokenOf is the one lease token a job's context carries.
func tokenOf(ctx context.Context) lease.Token {
	ts := lease.Tokens(ctx)
	if len(ts) != 1 {
		return lease.Token{}
	}
	return ts[0]
}

// fenceOnce is a write transaction that fences with tok and writes
// nothing else.
func fenceOnce(ctx context.Context, db *sql.DB, tok lease.Token) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := tok.Fence(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}

// RunWhileLeader with its database gone (renewals fail): the leader stops
// its jobs at the renew deadline, before its lease can expire in the
// database (TTL 1 s: deadline 667 ms after the last renewal started).
func TestRunWhileLeaderStopsAtTheRenewDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cluster := fmt.Sprintf("test-deadline-%06d", rand.IntN(1e6))
	a, db := leaderOn(t, cluster, time.Second)
	started := make(chan struct{}, 1)
	sched, err := NewScheduler([]Scheduled{{Spec: "@every 1h", Job: Func("probe", func(ctx context.Context) error {
		started <- struct{}{}
		<-ctx.Done()
		return nil
	})}}, quiet(), nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = RunWhileLeader(ctx, a, sched, nil, 200*time.Millisecond, quiet()); close(done) }()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("a did not lead within 5 s")
	}
	db.Close() // every renewal fails from now on
	t0 := time.Now()
	for len(sched.Running()) > 0 {
		if time.Since(t0) > time.Second {
			t.Fatalf("the job still runs %s after the database went away (TTL 1 s)", time.Since(t0))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("jobs stopped %s after the database went away", time.Since(t0).Round(time.Millisecond))
	cancel()
	<-done
}
