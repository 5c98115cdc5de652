package api

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTTLCacheOneLoadPerKey: requests that find a key missing at once
// wait for one load.
func TestTTLCacheOneLoadPerKey(t *testing.T) {
	now := time.Now()
	c := newTTLCache[string, int](time.Minute, func() time.Time { return now })
	var loads atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			v, err := c.get("k", func() (int, time.Duration, error) {
				loads.Add(1)
				<-release
				return 7, 0, nil
			})
			if err != nil || v != 7 {
				t.Errorf("get: %d %v", v, err)
			}
		})
	}
	time.Sleep(100 * time.Millisecond)
	close(release)
	wg.Wait()
	if n := loads.Load(); n != 1 {
		t.Fatalf("%d loads for 20 requests at once; want 1", n)
	}
}

// TestTTLCacheRefreshAhead: past half its time a value is returned at
// once and loaded again in the background; the new value replaces it.
func TestTTLCacheRefreshAhead(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	c := newTTLCache[string, int](10*time.Second, clock).refreshAhead()
	gen := 0
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	load := func() (int, time.Duration, error) {
		gen++
		if gen > 1 {
			started <- struct{}{}
			<-release
		}
		return gen, 0, nil
	}
	if v, _ := c.get("k", load); v != 1 {
		t.Fatal(v)
	}
	mu.Lock()
	now = now.Add(6 * time.Second) // past half of 10 s
	mu.Unlock()
	if v, _ := c.get("k", load); v != 1 { // at once, the value in hand
		t.Fatalf("got %d; want the value in hand (1) while the next loads", v)
	}
	<-started
	if v, _ := c.get("k", load); v != 1 { // one background load, not two
		t.Fatalf("got %d during the load", v)
	}
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, _ := c.get("k", func() (int, time.Duration, error) { t.Fatal("a fresh value is loaded again"); return 0, 0, nil })
		if v == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the value stayed %d", v)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
