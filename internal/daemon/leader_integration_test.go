//go:build integration

package daemon

import (
	"context"
	"testing"

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
	name := "gpubridge.test-leader"
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
	// a's connection dies: the server frees the lock.
	a.drop()
	if ok, err := b.TryAcquire(ctx); err != nil || !ok {
		t.Fatalf("b: acquire after a's connection closed = %v, %v; want true", ok, err)
	}
	b.Release(ctx)
	if b.Held(ctx) {
		t.Fatal("b still holds after Release")
	}
}
