package api

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// The event stream (GET /api/v1/tenants/{tenant}/events, and the portal's
// /portal/events on its session): Server-Sent Events of the pool's free
// counts (the calendar's fortnight, counts only, never who) and of the
// tenant's own bookings, both from what every request reads (the
// snapshot; the availability cached per refresh interval and booking
// change made here), never another tenant's booking.

const (
	// eventsPerKey and eventsOverall bound the open streams of one token
	// or person and of the server.
	eventsPerKey  = 4
	eventsOverall = 256
	// eventsTick is how often a stream looks for a new snapshot or a
	// booking change made here; eventsHeartbeat how often it sends a
	// comment when nothing changed (and checks that its sign-in still
	// holds: a revoked token, a signed-out session or a person removed
	// from the tenant ends the stream).
	eventsTick = time.Second
)

// eventsHeartbeat is a variable for the tests only (eventsBeat reads it).
var eventsHeartbeat atomic.Int64

func init() { eventsHeartbeat.Store(int64(15 * time.Second)) }

func eventsBeat() time.Duration { return time.Duration(eventsHeartbeat.Load()) }

// streams counts the open streams.
type streams struct {
	mu    sync.Mutex
	n     int
	byKey map[string]int
}

// open takes a place for key; false when key or the server is full.
func (c *streams) open(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey = map[string]int{}
	}
	if c.n >= eventsOverall || c.byKey[key] >= eventsPerKey {
		return false
	}
	c.n++
	c.byKey[key]++
	return true
}

func (c *streams) close(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n--
	if c.byKey[key]--; c.byKey[key] <= 0 {
		delete(c.byKey, key)
	}
}

// bookingEvent is one of the tenant's bookings as the stream sends it.
type bookingEvent struct {
	ID    int64     `json:"id"`
	What  string    `json:"what"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	State string    `json:"state"`
}

// events is the API's stream.
func (s *Server) events(q *req) (int, any, error) {
	r := q.r
	code := s.stream(q.w, r, q.tenant, rateKey(q.tok), func() bool {
		tok, _, err := s.authenticate(r)
		return err == nil && (tok.Tenant == q.tenant || forTenant(tok, q.tenant).Tenant == q.tenant)
	})
	return code, written{}, nil
}

// portalEvents is the portal script's stream, on the page's session.
func (s *Server) portalEvents(w http.ResponseWriter, r *http.Request) {
	if !s.portalRate(r) {
		writeError(w, http.StatusTooManyRequests, errTooMany)
		return
	}
	_, tok, _, code, err := s.signedIn(r)
	if err != nil {
		writeError(w, code, err)
		return
	}
	s.stream(w, r, tok.Tenant, rateKey(tok), func() bool {
		_, t, _, err := s.session(r)
		return err == nil && forTenant(t, tok.Tenant).Tenant == tok.Tenant
	})
}

// stream sends tenant's events to w until the client goes, the server
// stops or valid says the sign-in no longer holds.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, tenant, key string, valid func() bool) int {
	if s.o.Live == nil {
		writeError(w, http.StatusServiceUnavailable, errUnavailable)
		return http.StatusServiceUnavailable
	}
	if !s.streams.open(key) {
		w.Header().Set("Retry-After", "60")
		writeError(w, http.StatusTooManyRequests, fmt.Errorf("too many open event streams (at most %d per token or person, %d in all); close one", eventsPerKey, eventsOverall))
		return http.StatusTooManyRequests
	}
	defer s.streams.close(key)
	st := &streamer{s: s, w: w, r: r, rc: http.NewResponseController(w), tenant: tenant, lastWrites: -1, lastOwn: map[int64]bookingEvent{}, beat: time.Now()}
	if !st.start() {
		return http.StatusOK
	}
	t := time.NewTicker(eventsTick)
	defer t.Stop()
	for {
		if !st.changes() {
			return http.StatusOK
		}
		if time.Since(st.beat) >= eventsBeat() {
			if !valid() {
				st.send("end", map[string]string{"reason": "the sign-in no longer holds (signed out, token revoked or no longer a member)"})
				return http.StatusOK
			}
			if !st.write(": heartbeat\n\n") {
				return http.StatusOK
			}
			st.beat = time.Now()
		}
		select {
		case <-r.Context().Done():
			return http.StatusOK
		case <-t.C:
		}
	}
}

// streamer is one open stream: what it sent last.
type streamer struct {
	s          *Server
	w          http.ResponseWriter
	r          *http.Request
	rc         *http.ResponseController
	tenant     string
	lastSnap   *Snapshot
	lastWrites int64
	lastFree   map[string]int
	lastOwn    map[int64]bookingEvent
	beat       time.Time
}

// start sends the stream's headers and its reconnection delay.
func (st *streamer) start() bool {
	h := st.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // a proxy in front passes each event at once
	// The server's read timeout (server.readTimeout) would end the
	// request's context while the stream is open: the request is read,
	// and a client that goes is seen by the writes (a heartbeat at least
	// every eventsHeartbeat, each with its own write deadline).
	_ = st.rc.SetReadDeadline(time.Time{})
	st.w.WriteHeader(http.StatusOK)
	return st.write("retry: 5000\n\n")
}

// write sends one message at once: the server's write timeout
// (server.writeTimeout) is moved on for each, so that a stream outlives
// it and a stuck client still ends.
func (st *streamer) write(msg string) bool {
	_ = st.rc.SetWriteDeadline(time.Now().Add(2 * eventsBeat()))
	if _, err := fmt.Fprint(st.w, msg); err != nil {
		return false
	}
	return st.rc.Flush() == nil
}

func (st *streamer) send(event string, data any) bool {
	b, err := json.Marshal(data)
	return err == nil && st.write("event: "+event+"\ndata: "+string(b)+"\n\n")
}

// changes sends what changed since the last snapshot or booking change
// made here: the free counts, the tenant's own bookings; false when the
// client is gone.
func (st *streamer) changes() bool {
	s, snap, writes := st.s, st.s.o.Live.Current(), st.s.writes.Load()
	if snap == nil || (snap == st.lastSnap && writes == st.lastWrites) {
		return true
	}
	if free, err := s.freeMap(st.r, snap, st.tenant); err == nil && !maps.Equal(free, st.lastFree) {
		if !st.send("availability", map[string]any{"at": snap.At, "free": free}) {
			return false
		}
		st.lastFree = free
	}
	if snap != st.lastSnap {
		own := ownBookingEvents(snap, st.tenant)
		for _, id := range slices.Sorted(maps.Keys(own)) {
			if b := own[id]; st.lastOwn[id] != b && !st.send("booking", b) {
				return false
			}
		}
		st.lastOwn = own
	}
	st.lastSnap, st.lastWrites, st.beat = snap, writes, time.Now()
	return true
}

// ownBookingEvents is tenant's bookings of snap (those that end after
// its time), by id.
func ownBookingEvents(snap *Snapshot, tenant string) map[int64]bookingEvent {
	out := map[int64]bookingEvent{}
	for _, b := range snap.upcoming {
		if b.Tenant != tenant {
			continue
		}
		out[b.ID] = bookingEvent{ID: b.ID, What: b.What(), Start: b.Start, End: b.End, State: string(b.StateAt(snap.At))}
	}
	return out
}

// freeMap is the calendar's free counts (type|stamp -> free) that the
// portal shows tenant: the pool's counts, the same for every tenant.
func (s *Server) freeMap(r *http.Request, snap *Snapshot, tenant string) (map[string]int, error) {
	svc, err := s.readsOrUnavailable()
	if err != nil {
		return nil, err
	}
	from := snap.At.Truncate(calendarStep)
	av, err := s.poolAvailability(r.Context(), svc, reserve.AvailabilityQuery{From: from, To: from.Add(calendarCells * calendarStep), Step: calendarStep})
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, ct := range calendar(av, nil, tenant) {
		for _, c := range ct.cells {
			out[c.Key] = c.Free
		}
	}
	return out, nil
}
