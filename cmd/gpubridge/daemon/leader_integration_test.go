//go:build integration

package daemon

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// Two replicas on the real MariaDB: exactly one leads; when it releases
// (or its connection dies) the other takes over.
func TestLeaderElection(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	db1, err := sqldb.Open(ctx, env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db1.Close()
	db2, err := sqldb.Open(ctx, env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	name := fmt.Sprintf("gpubridge.test-leader-%06d", rand.IntN(1e6)) // a run of its own, whatever else holds locks
	a, b := NewLeader(db1.DB, name), NewLeader(db2.DB, name)
	if ok, err := a.TryAcquire(ctx); err != nil || !ok {
		t.Fatalf("a: acquire = %v, %v; want true", ok, err)
	}
	if ok, err := b.TryAcquire(ctx); err != nil || ok {
		t.Fatalf("b: acquire while a leads = %v, %v; want false", ok, err)
	}
	if !a.Held(ctx) || b.Held(ctx) {
		t.Fatalf("held: a=%v b=%v; want a only", a.Held(ctx), b.Held(ctx))
	}
	// a's connection dies: the server frees the lock once its thread has
	// seen the close, which a loaded server does a moment later. b keeps
	// campaigning, as RunWhileLeader does on each tick.
	a.drop()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := b.TryAcquire(ctx)
		if err != nil {
			t.Fatalf("b: acquire after a's connection closed: %v", err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("b: the lock is not free 10 s after a's connection closed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.Release(ctx)
	if b.Held(ctx) {
		t.Fatal("b still holds after Release")
	}
}

// The leader lock is per cluster: on one MariaDB server the daemons of two
// clusters both lead, while two replicas of one cluster still exclude
// each other.
func TestLeaderPerCluster(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	open := func() *sqlx.DB {
		db, err := sqldb.Open(ctx, env.DBDSN)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	suffix := fmt.Sprintf("%06d", rand.IntN(1e6))
	a1 := NewLeader(open().DB, LockName("it-a-"+suffix))
	a2 := NewLeader(open().DB, LockName("it-a-"+suffix))
	b := NewLeader(open().DB, LockName("it-b-"+suffix))
	defer a1.Release(ctx)
	defer a2.Release(ctx)
	defer b.Release(ctx)
	if ok, err := a1.TryAcquire(ctx); err != nil || !ok {
		t.Fatalf("cluster a, replica 1: %v, %v; want leader", ok, err)
	}
	if ok, err := b.TryAcquire(ctx); err != nil || !ok {
		t.Fatalf("cluster b while a leads: %v, %v; want leader (its own lock)", ok, err)
	}
	if ok, err := a2.TryAcquire(ctx); err != nil || ok {
		t.Fatalf("cluster a, replica 2: %v, %v; want refused", ok, err)
	}
}
