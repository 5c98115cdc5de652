package daemon

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
)

// TestAppPerConfiguration: every path but the daemon's own is served by
// the running configuration's App, whose background task runs while that
// configuration is in force and stops at a reload.
func TestAppPerConfiguration(t *testing.T) {
	h := newHarness(t)
	var gen, running atomic.Int32
	h.app = func(_ context.Context, c config.Config, _ *clients.Set) (http.Handler, func(ctx context.Context), error) {
		n := gen.Add(1)
		mux := http.NewServeMux()
		mux.HandleFunc("/api/v1/hello", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "generation %d, %s", n, r.Method)
		})
		return mux, func(ctx context.Context) {
			running.Add(1)
			<-ctx.Done()
			running.Add(-1)
		}, nil
	}
	h.start()
	if code, body := h.get("/api/v1/hello"); code != 200 || body != "generation 1, GET" {
		t.Fatalf("app: %d %q", code, body)
	}
	if code, _ := h.get("/readyz"); code != 200 && code != 503 {
		t.Errorf("/readyz is not the daemon's: %d", code)
	}
	if code, _ := h.get("/nosuch"); code != 404 {
		t.Errorf("/nosuch: %d; want 404", code)
	}
	// Other methods reach the app too (the daemon's own paths stay GET).
	req, _ := http.NewRequest("POST", "http://"+h.addr+"/api/v1/hello", nil)
	if resp, err := h.client.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("POST to the app: %v %v", resp, err)
	}
	h.eventually("the background task", func() bool { return running.Load() == 1 })
	h.setConfig(func(c *config.Config) { c.Schedules.Burst = "@every 1h" })
	h.reloadNow()
	h.eventually("generation 2", func() bool { _, b := h.get("/api/v1/hello"); return b == "generation 2, GET" })
	h.eventually("one background task after the reload", func() bool { return running.Load() == 1 })
	time.Sleep(50 * time.Millisecond)
	if n := running.Load(); n != 1 {
		t.Errorf("%d background tasks after the reload; want 1", n)
	}
	h.stop()
	if n := running.Load(); n != 0 {
		t.Errorf("%d background tasks after the stop", n)
	}
}
