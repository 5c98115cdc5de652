package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// Check is one readiness probe of a dependency the daemon needs.
type Check struct {
	Name string
	Run  func(ctx context.Context) error
}

// Checker runs the readiness probes, all at once and each bounded by
// Timeout, and caches their result for TTL: however many requests ask,
// a dependency is probed at most once per TTL. It logs each change of a
// dependency's state (the HTTP answer stays generic) and keeps the
// gpubridge_dependency_up gauges.
type Checker struct {
	checks  []Check
	ttl     time.Duration
	timeout time.Duration
	now     func() time.Time
	log     *slog.Logger
	metrics *Metrics

	mu       sync.Mutex
	at       time.Time // of the cached result; zero = none
	results  map[string]error
	inflight chan struct{}
	probes   int
}

// NewChecker returns a checker over checks; m may be nil.
func NewChecker(checks []Check, ttl, timeout time.Duration, log *slog.Logger, m *Metrics) *Checker {
	return &Checker{checks: checks, ttl: ttl, timeout: timeout, now: time.Now, log: log, metrics: m, results: map[string]error{}}
}

// Ready reports whether every dependency answered its last probe,
// probing again when the cached result is older than TTL. A caller whose
// ctx ends while a probe runs gets false.
func (c *Checker) Ready(ctx context.Context) bool {
	res, ok := c.Results(ctx)
	if !ok {
		return false
	}
	for _, err := range res {
		if err != nil {
			return false
		}
	}
	return true
}

// Up reports whether the dependency name answered its last probe (cached
// like Ready). A name the checker does not probe counts as up.
func (c *Checker) Up(ctx context.Context, name string) bool {
	res, ok := c.Results(ctx)
	return ok && res[name] == nil
}

// Results returns the last probe's result per dependency (nil error =
// up), probing first when it is older than TTL (a caller that finds a
// probe running waits for it); ok is false when ctx ended before a
// result was there.
func (c *Checker) Results(ctx context.Context) (map[string]error, bool) {
	for {
		c.mu.Lock()
		if !c.at.IsZero() && c.now().Sub(c.at) < c.ttl {
			r := c.copyResults()
			c.mu.Unlock()
			return r, true
		}
		wait := c.inflight
		if wait == nil {
			c.inflight = make(chan struct{})
			c.mu.Unlock()
			return c.probe(), true
		}
		c.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, false
		}
	}
}

func (c *Checker) copyResults() map[string]error {
	r := make(map[string]error, len(c.results))
	for k, v := range c.results {
		r[k] = v
	}
	return r
}

// probe runs every check in parallel, each within the timeout, on a
// context of its own (a caller that gives up does not cut the probe
// short for the others), then stores the result and wakes the waiters.
func (c *Checker) probe() map[string]error {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	res := make([]error, len(c.checks))
	var wg sync.WaitGroup
	for i, ch := range c.checks {
		wg.Go(func() {
			done := make(chan error, 1)
			go func() { done <- ch.Run(ctx) }()
			select {
			case err := <-done:
				res[i] = err
			case <-ctx.Done():
				res[i] = fmt.Errorf("no answer within %s", c.timeout)
			}
		})
	}
	wg.Wait()

	c.mu.Lock()
	defer c.mu.Unlock()
	c.probes++
	for i, ch := range c.checks {
		err := res[i]
		prev, seen := c.results[ch.Name]
		switch {
		case err != nil && (!seen || prev == nil || prev.Error() != err.Error()):
			lvl := slog.LevelWarn
			if clients.Permanent(err) {
				lvl = slog.LevelError
			}
			c.log.Log(ctx, lvl, "dependency not ready", "dependency", ch.Name, "err", err)
		case err == nil && seen && prev != nil:
			c.log.Info("dependency ready again", "dependency", ch.Name)
		}
		c.results[ch.Name] = err
		if c.metrics != nil {
			up := 0.0
			if err == nil {
				up = 1
			}
			c.metrics.dependencyUp.WithLabelValues(ch.Name).Set(up)
			if ch.Name == clients.NameDatabase {
				refused := 0.0
				if errors.Is(err, sqldb.ErrNoSchema) || errors.Is(err, sqldb.ErrForeignSchema) {
					refused = 1
				}
				c.metrics.schemaRefused.Set(refused)
			}
		}
	}
	c.at = c.now()
	close(c.inflight)
	c.inflight = nil
	return c.copyResults()
}

// Watch probes every TTL until ctx ends, so that the gauges and the log
// follow the dependencies even when nobody asks /readyz.
func (c *Checker) Watch(ctx context.Context) {
	t := time.NewTicker(c.ttl)
	defer t.Stop()
	for {
		c.Results(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
