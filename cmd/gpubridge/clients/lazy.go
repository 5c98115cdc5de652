package clients

import (
	"context"
	"errors"
)

// ErrClosed is returned by a client of a Set that was closed (replaced by
// a reload, or at shutdown).
var ErrClosed = errors.New("client closed")

// lazy is one client built on first use. Its lock is a channel so that a
// caller waiting behind a slow build can give up with its context.
type lazy[T any] struct {
	name  string
	fp    string // fingerprint of the settings the build uses
	build func(ctx context.Context) (T, error)
	close func(T)

	sem    chan struct{}
	built  bool
	closed bool
	v      T
}

func newLazy[T any](name, fp string, build func(context.Context) (T, error), closeFn func(T)) *lazy[T] {
	return &lazy[T]{name: name, fp: fp, build: build, close: closeFn, sem: make(chan struct{}, 1)}
}

func (l *lazy[T]) lock(ctx context.Context) error {
	select {
	case l.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *lazy[T]) unlock() { <-l.sem }

// get returns the client, building it when it is not built yet. A failed
// build is not remembered: the next get tries again.
func (l *lazy[T]) get(ctx context.Context) (T, error) {
	var zero T
	if err := l.lock(ctx); err != nil {
		return zero, err
	}
	defer l.unlock()
	if l.closed {
		return zero, ErrClosed
	}
	if l.built {
		return l.v, nil
	}
	v, err := l.build(ctx)
	if err != nil {
		return zero, err
	}
	l.v, l.built = v, true
	return v, nil
}

// isBuilt reports whether the client was built (and not closed).
func (l *lazy[T]) isBuilt() bool {
	_, ok := l.peek()
	return ok
}

// peek returns the client if it was built (and not closed), without
// building it.
func (l *lazy[T]) peek() (T, bool) {
	l.sem <- struct{}{}
	defer l.unlock()
	return l.v, l.built && !l.closed
}

// shutdown closes the client if it was built; later gets fail with
// ErrClosed. It waits for a build in progress.
func (l *lazy[T]) shutdown() {
	l.sem <- struct{}{}
	defer l.unlock()
	if l.closed {
		return
	}
	l.closed = true
	if l.built && l.close != nil {
		l.close(l.v)
	}
	var zero T
	l.v = zero
}

// Lazy is a value built at its first successful use, for the ports of a
// daemon's feature that must not connect before they are used (the tenant
// API's stores and services). A failed build is not remembered; a caller
// waiting behind a slow build gives up with its context.
type Lazy[T any] struct{ l *lazy[T] }

// NewLazy returns the value that build makes at the first Get.
func NewLazy[T any](build func(ctx context.Context) (T, error)) *Lazy[T] {
	return &Lazy[T]{l: newLazy("", "", build, nil)}
}

// Get returns the value, building it when it is not built yet.
func (l *Lazy[T]) Get(ctx context.Context) (T, error) { return l.l.get(ctx) }
