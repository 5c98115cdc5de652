package api

import (
	"container/list"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
)

// A browser signs in once (a Slurm JWT, or an API token for scripts that
// drive the page) and then holds only a session: a random id in an
// HttpOnly, SameSite=Strict cookie (Secure off loopback). The session
// keeps who signed in (the person, or the token's hash), never the JWT or
// the token, and a CSRF token that every form which changes something
// carries. The rights are found again on every request: a person removed
// from a tenant, or a token deleted, loses access at once.

// Session is one signed-in browser.
type Session struct {
	ID   string
	CSRF string
	// Person is the Slurm user of a JWT sign-in; TokenHash the API token
	// of a token sign-in (one of the two).
	Person    string
	TokenHash token.Hash
	Expires   time.Time
}

// SessionStore keeps the sessions (MemorySessions).
type SessionStore interface {
	Create(ctx context.Context, s Session) error
	Get(ctx context.Context, id string) (Session, error)
	Delete(ctx context.Context, id string) error
}

// ErrNoSession is what SessionStore.Get returns for an id of no live
// session (any other error is the store's: 503).
var ErrNoSession = errors.New("your session has ended; sign in again")

// errNoSession is ErrNoSession.
var errNoSession = ErrNoSession

// sessionTTL bounds a session's life (a JWT's exp bounds it sooner).
const sessionTTL = 12 * time.Hour

// MemorySessions is a SessionStore in memory, bounded to Max sessions
// (the oldest goes first). Sessions are cheap to make again (sign in
// again with a JWT) and their rights are checked on every request, so a
// restart that signs every browser out costs a sign-in and nothing else;
// a load balancer in front of several replicas must be sticky.
type MemorySessions struct {
	Max int
	Now func() time.Time

	mu    sync.Mutex
	byID  map[string]*list.Element
	order list.List // oldest first
}

// NewMemorySessions makes a store of at most max sessions.
func NewMemorySessions(max int) *MemorySessions {
	return &MemorySessions{Max: max, byID: map[string]*list.Element{}}
}

func (m *MemorySessions) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// Create implements SessionStore.
func (m *MemorySessions) Create(_ context.Context, s Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for m.order.Len() >= max(m.Max, 1) {
		old := m.order.Front()
		delete(m.byID, old.Value.(Session).ID)
		m.order.Remove(old)
	}
	m.byID[s.ID] = m.order.PushBack(s)
	return nil
}

// Get implements SessionStore: an expired session is gone.
func (m *MemorySessions) Get(_ context.Context, id string) (Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.byID[id]
	if !ok {
		return Session{}, errNoSession
	}
	s := e.Value.(Session)
	if !m.now().Before(s.Expires) {
		delete(m.byID, id)
		m.order.Remove(e)
		return Session{}, errNoSession
	}
	return s, nil
}

// Delete implements SessionStore.
func (m *MemorySessions) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.byID[id]; ok {
		delete(m.byID, id)
		m.order.Remove(e)
	}
	return nil
}

// randomID is 256 random bits, URL-safe.
func randomID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return base64.RawURLEncoding.EncodeToString(b)
}

// newSession makes the session of a sign-in by tok (a person's or a
// stored token) and sets its cookie.
func (s *Server) newSession(w http.ResponseWriter, r *http.Request, tok token.Token) error {
	ss := Session{ID: randomID(), CSRF: randomID(), Person: tok.Person, TokenHash: tok.Hash, Expires: s.now().Add(sessionTTL)}
	if !tok.ExpiresAt.IsZero() && tok.ExpiresAt.Before(ss.Expires) {
		ss.Expires = tok.ExpiresAt
	}
	if err := s.o.Sessions.Create(r.Context(), ss); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: ss.ID, Path: "/", HttpOnly: true, Secure: s.secure(r),
		SameSite: http.SameSiteStrictMode, MaxAge: int(ss.Expires.Sub(s.now()) / time.Second)})
	return nil
}

// session finds the request's session and the rights it has now: a
// person's tenants read again, a token looked up again.
func (s *Server) session(r *http.Request) (Session, token.Token, int, error) {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return Session{}, token.Token{}, http.StatusUnauthorized, errNoSession
	}
	ss, err := s.o.Sessions.Get(r.Context(), c.Value)
	if errors.Is(err, ErrNoSession) {
		return Session{}, token.Token{}, http.StatusUnauthorized, errNoSession
	}
	if err != nil {
		s.o.Logger.Warn("read a portal session", "err", err)
		return Session{}, token.Token{}, http.StatusServiceUnavailable, errUnavailable
	}
	if ss.Person != "" {
		ms, err := s.members(r.Context(), ss.Person)
		if err != nil {
			return ss, token.Token{}, http.StatusServiceUnavailable, errUnavailable
		}
		if len(ms) == 0 {
			return ss, token.Token{}, http.StatusForbidden, errNotMember
		}
		return ss, personToken(ss.Person, ms, ss.Expires), 0, nil
	}
	tok, err := s.tokens.get(ss.TokenHash, func() (token.Token, time.Duration, error) {
		t, err := s.o.Tokens.Lookup(r.Context(), ss.TokenHash)
		return t, 0, err
	})
	switch {
	case err != nil && (errors.Is(err, s.o.TokenNotFound) || errors.Is(err, ErrTokenNotFound)):
		return ss, token.Token{}, http.StatusUnauthorized, errNoSession
	case err != nil:
		return ss, token.Token{}, http.StatusServiceUnavailable, errUnavailable
	case tok.Expired(s.now()):
		return ss, token.Token{}, http.StatusUnauthorized, errNoSession
	}
	s.touch(tok)
	return ss, tok, 0, nil
}

// csrfOK says whether the form's csrf field is the session's.
func csrfOK(r *http.Request, ss Session) bool {
	v := r.PostFormValue("csrf")
	return v != "" && ss.CSRF != "" && subtle.ConstantTimeCompare([]byte(v), []byte(ss.CSRF)) == 1
}
