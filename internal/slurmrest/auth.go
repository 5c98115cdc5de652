package slurmrest

import (
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// authenticator supplies X-SLURM-USER-TOKEN headers: tokens minted from the
// key (one cached per user, renewed when a third of the lifetime is left),
// or the given static token.
type authenticator struct {
	key      []byte // nil with a static token
	static   string
	user     string
	lifetime time.Duration
	now      func() time.Time

	mu     sync.Mutex
	tokens map[string]minted
	// skew is how far slurmctld's clock is ahead of now(): tokens are
	// minted by now()+skew (see clock.go).
	skew time.Duration
}

type minted struct {
	token string
	exp   time.Time
}

func newAuthenticator(o Options) (*authenticator, error) {
	a := &authenticator{user: o.User, lifetime: o.TokenLifetime, now: o.Now, tokens: map[string]minted{}}
	switch {
	case o.JWTKeyFile != "":
		key, err := os.ReadFile(o.JWTKeyFile)
		if err != nil {
			return nil, fmt.Errorf("slurmrest: read JWT key: %w", err)
		}
		if len(key) == 0 {
			return nil, fmt.Errorf("slurmrest: %w: JWT key file %s is empty", ErrInvalid, o.JWTKeyFile)
		}
		a.key = key
	case o.Token != "":
		a.static = o.Token
	default:
		return nil, fmt.Errorf("slurmrest: %w: neither a JWT key file nor a token is configured", ErrInvalid)
	}
	return a, nil
}

// apply sets the auth headers for a request made as user ("" = the
// configured user).
func (a *authenticator) apply(req *http.Request, user string) error {
	if a.key == nil {
		req.Header.Set("X-SLURM-USER-TOKEN", a.static)
		if user != "" {
			req.Header.Set("X-SLURM-USER-NAME", user)
		}
		return nil
	}
	if user == "" {
		user = a.user
	}
	tok, err := a.token(user)
	if err != nil {
		return err
	}
	req.Header.Set("X-SLURM-USER-TOKEN", tok)
	return nil
}

// token returns a cached token for user, minting a new one when less than a
// third of its lifetime is left.
func (a *authenticator) token(user string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now().Add(a.skew)
	if m, ok := a.tokens[user]; ok && m.exp.Sub(now) > a.lifetime/3 {
		return m.token, nil
	}
	s, exp, err := a.sign(user, now, a.lifetime)
	if err != nil {
		return "", err
	}
	for u, m := range a.tokens {
		if !m.exp.After(now) {
			delete(a.tokens, u) // keep the cache to live users' tokens
		}
	}
	a.tokens[user] = minted{token: s, exp: exp}
	return s, nil
}

// sign mints a token for user issued at now.
func (a *authenticator) sign(user string, now time.Time, lifetime time.Duration) (string, time.Time, error) {
	// iat is now, not in the past: see docs/slurmrest.md for the clock rules
	// measured against slurmrestd.
	iat := now.Truncate(time.Second)
	exp := iat.Add(lifetime)
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sun": user,
		"iat": iat.Unix(),
		"exp": exp.Unix(),
	})
	s, err := t.SignedString(a.key)
	if err != nil {
		return "", exp, fmt.Errorf("slurmrest: sign JWT for %q: %w", user, err)
	}
	return s, exp, nil
}

// mint returns an uncached token for user with the given lifetime.
func (a *authenticator) mint(user string, lifetime time.Duration) (string, error) {
	a.mu.Lock()
	now := a.now().Add(a.skew)
	a.mu.Unlock()
	s, _, err := a.sign(user, now, lifetime)
	return s, err
}

// setSkew sets the clock correction, drops the cached tokens when it
// changes, and returns the previous correction.
func (a *authenticator) setSkew(d time.Duration) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	old := a.skew
	if d != old {
		a.skew = d
		clear(a.tokens)
	}
	return old
}
