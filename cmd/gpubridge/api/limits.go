package api

import (
	"container/list"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// The API's bounds on what one request may make it do or answer.
const (
	// maxSteps bounds the steps of one GPU type in an availability answer,
	// and maxBuckets the steps times the types of one answer (about 100
	// bytes each in JSON: 4,000 are some 400 KB).
	maxSteps   = 1_000
	maxBuckets = 4_000
	// maxTypes bounds the types of one availability query.
	maxTypes = 16
	// maxRows bounds the rows of a list (bookings, pending jobs); a longer
	// list is cut and says so ("more": true).
	maxRows = 1_000
	// maxAnswerBytes bounds one JSON answer: a bigger one is refused with
	// 400 (the request must be narrowed), never sent or cached.
	maxAnswerBytes = 4 << 20
	// maxBodyBytes bounds a booking request's body (413 past it).
	maxBodyBytes = 64 << 10
	// cacheBytes bounds the answers the read cache keeps, cacheEntryBytes
	// the biggest answer it keeps, and cacheEntries their number.
	cacheBytes      = 32 << 20
	cacheEntryBytes = 1 << 20
	cacheEntries    = 4_096
)

// methodLabel folds an HTTP method to a fixed set, so that no client
// makes a metric series of its own.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

// codeLabel folds a status code to the ones the API answers.
func codeLabel(code int) int {
	switch code {
	case 200, 201, 303, 400, 401, 403, 404, 405, 409, 413, 429, 503:
		return code
	}
	if code >= 500 {
		return 500
	}
	return 400
}

// keyed is a token bucket per key (an address, a token): allow spends
// one, blocked only looks. Buckets refilled to full are dropped once a
// minute, and all of them past maxKeys, so memory follows the keys active
// now.
type keyed struct {
	mu      sync.Mutex
	every   rate.Limit
	burst   int
	buckets map[string]*rate.Limiter
	swept   time.Time
}

const maxKeys = 100_000

func newKeyed(every rate.Limit, burst int) *keyed {
	return &keyed{every: every, burst: burst, buckets: map[string]*rate.Limiter{}}
}

// blocked says whether k's bucket is empty (it spends nothing).
func (l *keyed) blocked(k string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[k]
	return b != nil && b.TokensAt(now) < 1
}

// allow spends one from k's bucket; false when it is empty.
func (l *keyed) allow(k string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[k]
	if b == nil {
		if len(l.buckets) >= maxKeys {
			clear(l.buckets)
		}
		b = rate.NewLimiter(l.every, l.burst)
		l.buckets[k] = b
	}
	ok := b.AllowN(now, 1)
	if now.Sub(l.swept) > time.Minute {
		for k, v := range l.buckets {
			if v.TokensAt(now) >= float64(l.burst) {
				delete(l.buckets, k)
			}
		}
		l.swept = now
	}
	return ok
}

// answers is the read cache: JSON answers by their normalised request,
// each kept for ttl, all of them within maxBytes (the oldest go first).
type answers struct {
	mu       sync.Mutex
	ttl      time.Duration
	now      func() time.Time
	maxBytes int
	bytes    int
	order    *list.List // of *answer, oldest first
	m        map[string]*list.Element
}

type answer struct {
	key  string
	at   time.Time
	body []byte
}

func newAnswers(ttl time.Duration, maxBytes int, now func() time.Time) *answers {
	return &answers{ttl: ttl, now: now, maxBytes: maxBytes, order: list.New(), m: map[string]*list.Element{}}
}

// get returns k's answer while it is fresh.
func (c *answers) get(k string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok {
		return nil, false
	}
	a := e.Value.(*answer)
	if c.now().Sub(a.at) >= c.ttl {
		c.drop(e)
		return nil, false
	}
	return a.body, true
}

// put keeps body under k unless it is bigger than cacheEntryBytes; older
// answers go until the cache is within its bounds.
func (c *answers) put(k string, body []byte) {
	if len(body) > cacheEntryBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok {
		c.drop(e)
	}
	c.m[k] = c.order.PushBack(&answer{key: k, at: c.now(), body: body})
	c.bytes += len(body) + len(k)
	for c.bytes > c.maxBytes || len(c.m) > cacheEntries {
		c.drop(c.order.Front())
	}
}

func (c *answers) drop(e *list.Element) {
	a := c.order.Remove(e).(*answer)
	delete(c.m, a.key)
	c.bytes -= len(a.body) + len(a.key)
}

// size is the bytes and entries kept (tests).
func (c *answers) size() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes, len(c.m)
}

// unknownTenants remembers tenants a request named that a fresh snapshot
// did not hold, so that asking for them again does not read the cluster
// again: at most one refresh per name per ttl, and at most a few per
// second for all names together.
type unknownTenants struct {
	mu     sync.Mutex
	ttl    time.Duration
	seen   map[string]time.Time
	global *rate.Limiter
}

func newUnknownTenants(ttl time.Duration) *unknownTenants {
	return &unknownTenants{ttl: ttl, seen: map[string]time.Time{}, global: rate.NewLimiter(1, 3)}
}

// mayRefresh says whether a refresh may look for name now.
func (u *unknownTenants) mayRefresh(name string, now time.Time) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if at, ok := u.seen[name]; ok && now.Sub(at) < u.ttl {
		return false
	}
	return u.global.AllowN(now, 1)
}

// missed records that a refresh did not find name.
func (u *unknownTenants) missed(name string, now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.seen) >= maxKeys {
		clear(u.seen)
	}
	u.seen[name] = now
}
