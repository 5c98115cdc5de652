package clients_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
)

// A Lazy builds nothing until used, keeps its first successful value, and
// tries again after a failed build.
func TestLazyValue(t *testing.T) {
	builds := 0
	fail := true
	l := clients.NewLazy(func(context.Context) (int, error) {
		builds++
		if fail {
			return 0, errors.New("down")
		}
		return 42, nil
	})
	if builds != 0 {
		t.Fatalf("built before use")
	}
	ctx := context.Background()
	if _, err := l.Get(ctx); err == nil {
		t.Fatal("Get with a failing build: no error")
	}
	fail = false
	for range 3 {
		if v, err := l.Get(ctx); err != nil || v != 42 {
			t.Fatalf("Get = %d, %v; want 42", v, err)
		}
	}
	if builds != 2 {
		t.Errorf("%d builds; want 2 (one failed, one kept)", builds)
	}
}

// A caller waiting behind a slow build gives up with its context.
func TestLazyWaitEndsWithContext(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	l := clients.NewLazy(func(context.Context) (int, error) {
		close(started)
		<-release
		return 1, nil
	})
	go func() { _, _ = l.Get(context.Background()) }()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := l.Get(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Get behind a slow build = %v; want the context's error", err)
	}
	close(release)
}
