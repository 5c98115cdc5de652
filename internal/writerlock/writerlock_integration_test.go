//go:build integration

package writerlock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
	"github.com/gpubridge/gpubridge/internal/writerlock"
)

func open(t *testing.T) (*writerlock.Lock, *writerlock.Lock) {
	t.Helper()
	env := testbed.Require(t)
	if env.DBDSN == "" {
		t.Fatal("GPUBRIDGE_DB_DSN is unset: `source .testbed/env`")
	}
	db, err := sqldb.OpenMigrated(context.Background(), env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cluster := fmt.Sprintf("t9lock-%s-%d", strings.ToLower(t.Name()[4:]), os.Getpid())
	a := &writerlock.Lock{DB: db.DB, Cluster: cluster, Holder: "test A", Wait: time.Second}
	b := &writerlock.Lock{DB: db.DB, Cluster: cluster, Holder: "test B", Wait: 500 * time.Millisecond}
	return a, b
}

// TestLockExcludesAndNamesTheHolder: while A holds the lock, B waits its
// bounded time and fails naming A; once A releases, B takes it.
func TestLockExcludesAndNamesTheHolder(t *testing.T) {
	a, b := open(t)
	ctx := context.Background()
	release, err := a.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var waited string
	b.OnWait = func(holder string, _ time.Duration) { waited = holder }
	t0 := time.Now()
	_, err = b.Acquire(ctx)
	if !errors.Is(err, writerlock.ErrBusy) || !strings.Contains(err.Error(), "held by test A since ") || !strings.Contains(err.Error(), "gave up after 500ms") {
		t.Fatalf("B while A holds the lock: %v", err)
	}
	if d := time.Since(t0); d < 400*time.Millisecond {
		t.Errorf("B gave up after %s; want it to wait its 500ms", d)
	}
	if !strings.HasPrefix(waited, "test A since ") {
		t.Errorf("OnWait holder = %q", waited)
	}
	release()
	release() // idempotent
	rb, err := b.Acquire(ctx)
	if err != nil {
		t.Fatalf("B after A released: %v", err)
	}
	rb()
}

// TestLockWaitsForTheHolder: B, waiting, gets the lock as soon as A lets go.
func TestLockWaitsForTheHolder(t *testing.T) {
	a, b := open(t)
	b.Wait = 10 * time.Second
	ctx := context.Background()
	release, err := a.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got atomic.Bool
	done := make(chan error, 1)
	go func() {
		rb, err := b.Acquire(ctx)
		if err == nil {
			got.Store(true)
			rb()
		}
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	if got.Load() {
		t.Fatal("B got the lock while A held it")
	}
	release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("B did not get the lock within 5 s of A releasing it")
	}
}

// TestLockFreedWhenTheHolderDies: a writer that dies (its process killed:
// here its pool closed, so that nothing renews or releases its lease)
// holds the lock until the lease's TTL passes, no longer.
func TestLockFreedWhenTheHolderDies(t *testing.T) {
	a, b := open(t)
	ctx := context.Background()
	env := testbed.Require(t)
	dying, err := sqldb.Open(ctx, env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	a.DB, a.TTL = dying.DB, time.Second
	if _, err := a.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	dying.Close()
	b.Wait = 5 * time.Second
	t0 := time.Now()
	rb, err := b.Acquire(ctx)
	if err != nil {
		t.Fatalf("B after A died: %v", err)
	}
	rb()
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("B got the lock %s after A died; want within A's 1 s TTL", d)
	}
}
