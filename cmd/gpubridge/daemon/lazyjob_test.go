package daemon

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
)

// A build that fails with a transient error is retried within the run;
// once built, the job is kept.
func TestLazyRetriesTransientBuildErrors(t *testing.T) {
	var builds, runs atomic.Int32
	j := &lazyJob{name: "x", backoff: Backoff{Attempts: 4, Base: time.Millisecond, Max: time.Millisecond},
		build: func(context.Context) (Job, error) {
			if builds.Add(1) < 3 {
				return nil, errors.New("connection refused")
			}
			return Func("x", func(context.Context) error { runs.Add(1); return nil }), nil
		}}
	for range 3 {
		if err := j.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if builds.Load() != 3 || runs.Load() != 3 {
		t.Fatalf("builds %d, runs %d; want 3 builds (two failed) and 3 runs", builds.Load(), runs.Load())
	}
}

// A permanent error (a configuration problem) is not retried; the next
// run tries again from scratch.
func TestLazyDoesNotRetryPermanentErrors(t *testing.T) {
	var builds atomic.Int32
	j := &lazyJob{name: "x", backoff: Backoff{Attempts: 4, Base: time.Millisecond, Max: time.Millisecond},
		build: func(context.Context) (Job, error) {
			builds.Add(1)
			return nil, config.ValidationError{{Field: "database.dsn", Msg: "unset"}}
		}}
	err := j.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "x: connect: ") || !strings.Contains(err.Error(), "database.dsn") {
		t.Fatalf("Run = %v; want the job name and the field", err)
	}
	if builds.Load() != 1 {
		t.Fatalf("%d builds; want 1", builds.Load())
	}
	j.Run(context.Background())
	if builds.Load() != 2 {
		t.Fatalf("the next run did not try again (%d builds)", builds.Load())
	}
}

// Transient failures give up after the attempts.
func TestLazyGivesUp(t *testing.T) {
	var builds atomic.Int32
	j := &lazyJob{name: "x", backoff: Backoff{Attempts: 3, Base: time.Millisecond, Max: time.Millisecond},
		build: func(context.Context) (Job, error) { builds.Add(1); return nil, errors.New("connection refused") }}
	if err := j.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Run = %v", err)
	}
	if builds.Load() != 3 {
		t.Fatalf("%d builds; want 3", builds.Load())
	}
}

func TestLockName(t *testing.T) {
	if got := LockName("testbed"); got != "gpubridge.leader.testbed" {
		t.Fatalf("LockName = %q", got)
	}
	if LockName("a") == LockName("b") {
		t.Fatal("two clusters share a lock")
	}
	long1, long2 := strings.Repeat("c", 60)+"1", strings.Repeat("c", 60)+"2"
	n1, n2 := LockName(long1), LockName(long2)
	if len(n1) > 64 || len(n2) > 64 || n1 == n2 || !strings.HasPrefix(n1, "gpubridge.leader.ccc") {
		t.Fatalf("long names: %q (%d), %q (%d); want distinct, at most 64, with the prefix", n1, len(n1), n2, len(n2))
	}
}
