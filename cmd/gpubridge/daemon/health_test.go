package daemon

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// clock is a settable time for the checker's cache.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// The result is cached for TTL: many readiness requests make one probe
// of each dependency; after TTL the next request probes again.
func TestCheckerCachesWithinTTL(t *testing.T) {
	var calls atomic.Int32
	down := atomic.Bool{}
	check := Check{Name: clients.NameDatabase, Run: func(context.Context) error {
		calls.Add(1)
		if down.Load() {
			return errors.New("connection refused")
		}
		return nil
	}}
	clk := &clock{t: time.Unix(1e9, 0)}
	c := NewChecker([]Check{check}, 5*time.Second, time.Second, quiet(), nil)
	c.now = clk.now
	for range 50 {
		if !c.Ready(context.Background()) {
			t.Fatal("not ready with the dependency up")
		}
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d probes for 50 requests within the TTL; want 1", n)
	}
	down.Store(true)
	clk.add(4 * time.Second)
	if !c.Ready(context.Background()) {
		t.Fatal("the cached result changed before the TTL ended")
	}
	clk.add(2 * time.Second)
	if c.Ready(context.Background()) {
		t.Fatal("ready after the TTL, with the dependency down")
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d probes; want 2", n)
	}
}

// Requests that arrive while a probe runs wait for it instead of probing
// again; a requester whose context ends gets "not ready" at once.
func TestCheckerSingleFlight(t *testing.T) {
	var calls atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{})
	c := NewChecker([]Check{{Name: "slow", Run: func(context.Context) error {
		if calls.Add(1) == 1 {
			close(started)
		}
		<-release
		return nil
	}}}, time.Minute, time.Minute, quiet(), nil)
	var wg sync.WaitGroup
	results := make([]bool, 10)
	wg.Go(func() { results[0] = c.Ready(context.Background()) })
	<-started
	for i := 1; i < len(results); i++ {
		wg.Go(func() { results[i] = c.Ready(context.Background()) })
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if c.Ready(ctx) {
		t.Fatal("a requester that gave up was told ready")
	}
	close(release)
	wg.Wait()
	for i, r := range results {
		if !r {
			t.Fatalf("requester %d: not ready", i)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d probes; want 1", n)
	}
}

// A dependency that does not answer is "not ready" after the probe's
// timeout, not when its own call gives up.
func TestCheckerTimeBounded(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	c := NewChecker([]Check{{Name: "hung", Run: func(context.Context) error { <-hang; return nil }}},
		time.Minute, 20*time.Millisecond, quiet(), nil)
	done := make(chan bool)
	go func() { done <- c.Ready(context.Background()) }()
	select {
	case ready := <-done:
		if ready {
			t.Fatal("a hung dependency was reported ready")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the probe was not bounded by its timeout")
	}
}

// The gauges follow the probes; a database refused for its schema sets
// gpubridge_database_schema_refused.
func TestCheckerMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	var dbErr atomic.Pointer[error]
	set := func(err error) { dbErr.Store(&err) }
	set(nil)
	clk := &clock{t: time.Unix(1e9, 0)}
	c := NewChecker([]Check{
		{Name: clients.NameDatabase, Run: func(context.Context) error { return *dbErr.Load() }},
		{Name: clients.NameSlurmRest, Run: func(context.Context) error { return nil }},
	}, time.Second, time.Second, quiet(), m)
	c.now = clk.now
	c.Ready(context.Background())
	if v := testutil.ToFloat64(m.dependencyUp.WithLabelValues(clients.NameDatabase)); v != 1 {
		t.Fatalf("database up = %v; want 1", v)
	}
	set(errors.Join(errors.New(`database "x"`), sqldb.ErrNoSchema))
	clk.add(2 * time.Second)
	c.Ready(context.Background())
	if v := testutil.ToFloat64(m.dependencyUp.WithLabelValues(clients.NameDatabase)); v != 0 {
		t.Fatalf("database up = %v; want 0", v)
	}
	if v := testutil.ToFloat64(m.schemaRefused); v != 1 {
		t.Fatalf("schema refused = %v; want 1", v)
	}
	if v := testutil.ToFloat64(m.dependencyUp.WithLabelValues(clients.NameSlurmRest)); v != 1 {
		t.Fatalf("slurmrestd up = %v; want 1", v)
	}
}
