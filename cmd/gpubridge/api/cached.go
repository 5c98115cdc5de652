package api

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
)

// The read-only booking routes' answer cache.

// cached answers a read-only booking route from the cache, keyed by the
// parsed request (key: the route's normalised query), whether the token
// is an admin's, and the number of booking changes made through this
// server. A miss is encoded once and kept (within the cache's bounds)
// unless it is over maxAnswerBytes; a heavy one (a computation over the
// calendars) is computed under the heavy semaphore, so that such answers
// take at most half the CPUs whoever asks, and never delay the light
// routes (bookings, quota, usage) of other tenants.
func (s *Server) cached(q *req, key string, heavy bool, load func() (any, error)) (int, any, error) {
	key = fmt.Sprintf("%d|%t|%s", s.writes.Load(), q.tok.Scope == token.Admin, key)
	if b, ok := s.reads.get(key); ok {
		return http.StatusOK, rawJSON(b), nil
	}
	if heavy {
		select {
		case s.heavy <- struct{}{}:
			defer func() { <-s.heavy }()
		case <-q.r.Context().Done():
			return 0, nil, q.r.Context().Err()
		}
		if b, ok := s.reads.get(key); ok { // computed while this one waited
			return http.StatusOK, rawJSON(b), nil
		}
	}
	v, err := load()
	if err != nil {
		return 0, nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return 0, nil, err
	}
	if len(b) > maxAnswerBytes {
		return 0, nil, tooBig(len(b))
	}
	s.reads.put(key, b)
	return http.StatusOK, rawJSON(b), nil
}
