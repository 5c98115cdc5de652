package api

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
)

// sse reads a stream's events in the background.
type sse struct {
	events chan [2]string // event, data
	resp   *http.Response
}

func (h *harness) openEvents(t *testing.T, tenant, tok string) (*sse, int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r, _ := http.NewRequestWithContext(ctx, "GET", h.http.URL+"/api/v1/tenants/"+tenant+"/events", nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	resp, err := h.http.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, resp.StatusCode
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	s := &sse{events: make(chan [2]string, 100), resp: resp}
	go func() {
		defer close(s.events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var ev, data string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimPrefix(line, "data: ")
			case line == "" && ev != "":
				s.events <- [2]string{ev, data}
				ev, data = "", ""
			case strings.HasPrefix(line, ": "):
				s.events <- [2]string{"comment", line}
			}
		}
	}()
	return s, http.StatusOK
}

// until reads events until want says yes, failing on any event that
// bad says is wrong, or after 10 s.
func (s *sse) until(t *testing.T, what string, bad func(ev, data string) bool, want func(ev, data string) bool) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e, ok := <-s.events:
			if !ok {
				t.Fatalf("the stream ended waiting for %s", what)
			}
			if bad(e[0], e[1]) {
				t.Fatalf("event %s %s must not be sent", e[0], e[1])
			}
			if want(e[0], e[1]) {
				return
			}
		case <-timeout:
			t.Fatalf("no %s within 10 s", what)
		}
	}
}

func TestEventStream(t *testing.T) {
	h := newHarness(t)
	if code, _ := h.do("GET", "/api/v1/tenants/acme", h.acmeBook, ""); code != 200 { // the first snapshot
		t.Fatal(code)
	}
	// Another tenant's stream is 404, as any of its routes.
	if _, code := h.openEvents(t, "beta", h.acmeBook); code != http.StatusNotFound {
		t.Fatalf("acme's token on beta's events: %d, want 404", code)
	}
	acme, _ := h.openEvents(t, "acme", h.acmeBook)
	betaID := strconv.FormatInt(h.betaBooking.ID, 10)
	// Nothing of beta's: not its booking, not its name or purpose.
	foreign := func(ev, data string) bool {
		if strings.Contains(data, "beta") || strings.Contains(data, "bsecret") || strings.Contains(data, `"id":`+betaID+",") {
			return true
		}
		if ev != "booking" {
			return false
		}
		var b bookingEvent
		if err := json.Unmarshal([]byte(data), &b); err != nil {
			t.Fatalf("booking event %s: %v", data, err)
		}
		return b.ID != h.acmeBooking.ID
	}
	var free map[string]int
	gotFree := func(ev, data string) bool {
		if ev != "availability" {
			return false
		}
		var a struct{ Free map[string]int }
		if err := json.Unmarshal([]byte(data), &a); err != nil || len(a.Free) == 0 {
			t.Fatalf("availability event %s: %v", data, err)
		}
		free = a.Free
		return true
	}
	acme.until(t, "the free counts", foreign, gotFree)
	acme.until(t, "acme's booking", foreign, func(ev, data string) bool {
		return ev == "booking" && strings.Contains(data, `"id":`+strconv.FormatInt(h.acmeBooking.ID, 10)+",")
	})
	before := free

	// beta books: acme sees the pool's free count drop (never who), at
	// once (a booking made here), and never beta's booking.
	start := h.now.Truncate(calendarStep).Add(2 * 24 * time.Hour)
	if code, body := h.do("POST", "/api/v1/tenants/beta/bookings", h.betaBook, `{"gpus":"h100:1","start":"`+start.Format(time.RFC3339)+`","duration":"2h","purpose":"bsecret-two"}`); code != 201 {
		t.Fatalf("beta books: %d %s", code, body)
	}
	acme.until(t, "the free count after beta's booking", foreign, gotFree)
	key := "h100|" + start.Format(time.RFC3339)
	if !(free[key] == before[key]-1) {
		t.Fatalf("free %s: %d after beta's booking, %d before (keys like %v)", key, free[key], before[key], firstKey(free))
	}
	// The next snapshot holds beta's booking: still nothing of it for
	// acme; a heartbeat comes instead.
	eventsHeartbeat.Store(int64(2 * time.Second))
	t.Cleanup(func() { eventsHeartbeat.Store(int64(15 * time.Second)) })
	if _, err := h.srv.o.Live.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	acme.until(t, "a heartbeat", foreign, func(ev, _ string) bool { return ev == "comment" })

	// At most eventsPerKey streams per token.
	for range eventsPerKey - 1 {
		if _, code := h.openEvents(t, "acme", h.acmeBook); code != http.StatusOK {
			t.Fatalf("stream within the bound: %d", code)
		}
	}
	if _, code := h.openEvents(t, "acme", h.acmeBook); code != http.StatusTooManyRequests {
		t.Fatalf("stream past the bound: %d, want 429", code)
	}

	// Revoking the token ends its streams (at the next heartbeat).
	if _, err := h.tokens.Delete(context.Background(), "test", "acme", "ci"); err != nil {
		t.Fatal(err)
	}
	hash, err := token.HashOf(h.acmeBook)
	if err != nil {
		t.Fatal(err)
	}
	h.srv.tokens.forget(hash)
	acme.until(t, "the end after revocation", foreign, func(ev, _ string) bool { return ev == "end" })
}

func firstKey(m map[string]int) string {
	for k := range m {
		return k
	}
	return ""
}

// TestEventStreamOutlivesServerTimeouts: the server's read and write
// timeouts (server.readTimeout, writeTimeout) do not end a stream.
func TestEventStreamOutlivesServerTimeouts(t *testing.T) {
	h := newHarness(t)
	eventsHeartbeat.Store(int64(500 * time.Millisecond))
	t.Cleanup(func() { eventsHeartbeat.Store(int64(15 * time.Second)) })
	srv := httptest.NewUnstartedServer(h.srv)
	srv.Config.ReadTimeout, srv.Config.WriteTimeout = 700*time.Millisecond, 700*time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	h.http = srv
	s, code := h.openEvents(t, "acme", h.acmeBook)
	if code != http.StatusOK {
		t.Fatal(code)
	}
	end := time.Now().Add(3 * time.Second)
	beats := 0
	for time.Now().Before(end) {
		s.until(t, "a heartbeat", func(string, string) bool { return false }, func(ev, _ string) bool { return ev == "comment" })
		beats++
	}
	if beats < 2 { // one a tick (eventsTick) at most
		t.Fatalf("%d heartbeats in 3 s", beats)
	}
}
