package daemon

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sethvargo/go-retry"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
)

// Backoff is how a lazy job retries a failed build within one run:
// Attempts in all, waiting Base, then twice as long each time up to Max,
// each wait jittered by 20 %. The next run (the job's next tick) starts
// again from Base, so a dependency that returns is picked up at the next
// tick at the latest.
type Backoff struct {
	Attempts uint64
	Base     time.Duration
	Max      time.Duration
}

// DefaultBackoff gives a build about 3.5 s of retries (0.5 s, 1 s, 2 s).
var DefaultBackoff = Backoff{Attempts: 4, Base: 500 * time.Millisecond, Max: 5 * time.Second}

func (b Backoff) policy() retry.Backoff {
	attempts := b.Attempts
	if attempts == 0 {
		attempts = 1
	}
	return retry.WithMaxRetries(attempts-1,
		retry.WithCappedDuration(b.Max, retry.WithJitterPercent(20, retry.NewExponential(b.Base))))
}

// Do runs fn until it succeeds, fails with a permanent error
// (clients.Permanent: a configuration problem, a refused database or
// credential), the attempts are used up, or ctx ends.
func (b Backoff) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	return retry.Do(ctx, b.policy(), func(ctx context.Context) error {
		err := fn(ctx)
		if err == nil || clients.Permanent(err) {
			return err
		}
		return retry.RetryableError(err)
	})
}

// Lazy returns a job that builds its real job (and so connects its
// clients) on its first run, retrying with DefaultBackoff, and again at
// the next run after a failed build. Once built it is kept: the clients
// reconnect by themselves, and a reload makes new jobs.
func Lazy(name string, build func(ctx context.Context) (Job, error)) Job {
	return &lazyJob{name: name, build: build, backoff: DefaultBackoff}
}

type lazyJob struct {
	name    string
	build   func(ctx context.Context) (Job, error)
	backoff Backoff

	mu  sync.Mutex
	job Job
}

func (l *lazyJob) Name() string { return l.name }

func (l *lazyJob) Run(ctx context.Context) error {
	l.mu.Lock()
	j := l.job
	if j == nil {
		err := l.backoff.Do(ctx, func(ctx context.Context) error {
			var err error
			j, err = l.build(ctx)
			return err
		})
		if err != nil {
			l.mu.Unlock()
			return fmt.Errorf("%s: connect: %w", l.name, err)
		}
		l.job = j
	}
	l.mu.Unlock()
	return j.Run(ctx)
}
