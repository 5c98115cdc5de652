package api

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// Where the site has an OpenID Connect provider, a person signs in there
// instead of pasting a Slurm token: the authorization code flow with PKCE
// (coreos/go-oidc verifies the ID token, x/oauth2 makes the exchange).
// GET /oidc/login starts a flow: a random state, nonce and PKCE verifier,
// kept here (at most oidcFlowTTL, used once) under a random id in a
// cookie of their own (SameSite=Lax: the provider's redirect back is a
// top-level navigation from another site, which a Strict cookie would not
// follow), and a redirect to the provider. GET /oidc/callback takes the
// code only with the flow's state, exchanges it with the verifier,
// verifies the ID token (signature by the provider's keys, issuer,
// audience, expiry) and its nonce, and reads the Slurm user name from the
// configured claim. That user's tenants are found as for a Slurm JWT, and
// the browser gets a session like a JWT sign-in's.

// OIDC configures sign-in through an OpenID Connect provider (nil: off).
type OIDC struct {
	// Issuer is the provider's issuer URL (its discovery document is at
	// Issuer/.well-known/openid-configuration).
	Issuer string
	// ClientID and ClientSecret are this portal's client at the provider
	// (ClientSecret is read at the first sign-in: a file's content).
	ClientID     string
	ClientSecret func() (string, error)
	// RedirectURL is this portal's /oidc/callback as the browser reaches
	// it (registered at the provider).
	RedirectURL string
	// UserClaim is the ID token claim that holds the Slurm user name
	// (default preferred_username).
	UserClaim string
	// Scopes are asked for besides openid (default profile).
	Scopes []string
	// HTTPClient talks to the provider (nil: http.DefaultClient).
	HTTPClient *http.Client
}

// oidcCookie names a flow's cookie; oidcFlowTTL bounds a flow's life and
// oidcFlowsMax the flows kept at once (the oldest goes first).
const (
	oidcCookie   = "gpubridge_oidc"
	oidcFlowTTL  = 10 * time.Minute
	oidcFlowsMax = 10_000
)

// errOIDC: the provider's answer is not a sign-in this portal asked for.
var errOIDC = errors.New("the sign-in through your organisation's account did not complete (expired, started elsewhere, or refused); start again")

// oidcFlow is one started sign-in.
type oidcFlow struct {
	state, nonce, verifier string
	expires                time.Time
}

// oidcClient is the configured provider, discovered at the first sign-in
// and again after a failure (rule: connect on first use).
type oidcClient struct {
	cfg OIDC

	mu       sync.Mutex
	provider *oidc.Provider
	oauth    *oauth2.Config
	flows    map[string]oidcFlow
}

// client discovers the provider on first use and returns the OAuth2
// configuration and the ID token verifier.
func (c *oidcClient) client(ctx context.Context) (*oauth2.Config, *oidc.IDTokenVerifier, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.provider == nil {
		if c.cfg.HTTPClient != nil {
			ctx = oidc.ClientContext(ctx, c.cfg.HTTPClient)
		}
		p, err := oidc.NewProvider(ctx, c.cfg.Issuer)
		if err != nil {
			return nil, nil, fmt.Errorf("discover the OIDC provider %s: %w", c.cfg.Issuer, err)
		}
		secret := ""
		if c.cfg.ClientSecret != nil {
			if secret, err = c.cfg.ClientSecret(); err != nil {
				return nil, nil, fmt.Errorf("read the OIDC client secret: %w", err)
			}
		}
		scopes := append([]string{oidc.ScopeOpenID}, c.cfg.Scopes...)
		if len(c.cfg.Scopes) == 0 {
			scopes = append(scopes, "profile")
		}
		c.provider = p
		c.oauth = &oauth2.Config{ClientID: c.cfg.ClientID, ClientSecret: strings.TrimSpace(secret), Endpoint: p.Endpoint(),
			RedirectURL: c.cfg.RedirectURL, Scopes: scopes}
	}
	return c.oauth, c.provider.Verifier(&oidc.Config{ClientID: c.cfg.ClientID}), nil
}

// start keeps a new flow and returns its id.
func (c *oidcClient) start(now time.Time) (string, oidcFlow) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.flows == nil {
		c.flows = map[string]oidcFlow{}
	}
	if len(c.flows) >= oidcFlowsMax {
		for id, f := range c.flows {
			if !now.Before(f.expires) || len(c.flows) >= oidcFlowsMax {
				delete(c.flows, id)
			}
		}
	}
	f := oidcFlow{state: randomID(), nonce: randomID(), verifier: oauth2.GenerateVerifier(), expires: now.Add(oidcFlowTTL)}
	id := randomID()
	c.flows[id] = f
	return id, f
}

// take removes the flow of id and returns it when it is still live.
func (c *oidcClient) take(id string, now time.Time) (oidcFlow, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.flows[id]
	delete(c.flows, id)
	return f, ok && now.Before(f.expires)
}

// oidcRoutes mounts the OIDC sign-in when one is configured.
func (s *Server) oidcRoutes(mux *http.ServeMux) {
	if s.oidc == nil {
		return
	}
	mux.HandleFunc("GET /oidc/login", s.oidcLogin)
	mux.HandleFunc("GET /oidc/callback", s.oidcCallback)
}

// oidcLogin starts a flow and sends the browser to the provider.
func (s *Server) oidcLogin(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	code := func() int {
		if !s.portalRate(r) {
			s.message(w, http.StatusTooManyRequests, "", errTooMany.Error())
			return http.StatusTooManyRequests
		}
		conf, _, err := s.oidc.client(r.Context())
		if err != nil {
			s.o.Logger.Warn("OIDC sign-in", "err", err)
			s.render(w, http.StatusServiceUnavailable, "login", s.loginPage(errUnavailable))
			return http.StatusServiceUnavailable
		}
		id, f := s.oidc.start(s.now())
		http.SetCookie(w, &http.Cookie{Name: oidcCookie, Value: id, Path: "/oidc/", HttpOnly: true, Secure: s.secure(r),
			SameSite: http.SameSiteLaxMode, MaxAge: int(oidcFlowTTL / time.Second)})
		http.Redirect(w, r, conf.AuthCodeURL(f.state, oidc.Nonce(f.nonce), oauth2.S256ChallengeOption(f.verifier)), http.StatusFound)
		return http.StatusFound
	}()
	s.o.Metrics.observe("/oidc/login", r.Method, code, time.Since(start))
}

// oidcCallback ends a flow: the provider's code, taken only with the
// flow's state, exchanged with its verifier for an ID token whose nonce
// is the flow's; the claim's user signs in with its tenants.
func (s *Server) oidcCallback(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	code := func() int {
		if !s.portalRate(r) {
			s.message(w, http.StatusTooManyRequests, "", errTooMany.Error())
			return http.StatusTooManyRequests
		}
		http.SetCookie(w, &http.Cookie{Name: oidcCookie, Value: "", Path: "/oidc/", MaxAge: -1, HttpOnly: true, Secure: s.secure(r), SameSite: http.SameSiteLaxMode})
		user, exp, code, err := s.oidcUser(r)
		if err != nil {
			s.render(w, code, "login", s.loginPage(err))
			return code
		}
		ms, err := s.members(r.Context(), user)
		switch {
		case err != nil:
			s.o.Logger.Warn("read the tenants' members", "err", err)
			s.render(w, http.StatusServiceUnavailable, "login", s.loginPage(errUnavailable))
			return http.StatusServiceUnavailable
		case len(ms) == 0:
			s.o.Metrics.authFailures.WithLabelValues("no-tenant").Inc()
			s.render(w, http.StatusForbidden, "login", s.loginPage(errNotMember))
			return http.StatusForbidden
		}
		if c, err := r.Cookie(cookieName); err == nil {
			_ = s.o.Sessions.Delete(r.Context(), c.Value) // a sign-in always gets a new session id
		}
		if err := s.newSession(w, r, personToken(user, ms, exp)); err != nil {
			s.o.Logger.Warn("start a portal session", "err", err)
			s.render(w, http.StatusServiceUnavailable, "login", s.loginPage(errUnavailable))
			return http.StatusServiceUnavailable
		}
		s.o.Logger.Info("signed in through OIDC", "user", user)
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return http.StatusSeeOther
	}()
	s.o.Metrics.observe("/oidc/callback", r.Method, code, time.Since(start))
}

// oidcUser checks the callback against its flow and returns the Slurm
// user of its ID token and until when the session may last (sessionTTL:
// the rights are read again on every request), or the status and error
// to show.
func (s *Server) oidcUser(r *http.Request) (string, time.Time, int, error) {
	c, err := r.Cookie(oidcCookie)
	if err != nil {
		return s.oidcRefused("no flow cookie")
	}
	f, ok := s.oidc.take(c.Value, s.now())
	q := r.URL.Query()
	switch {
	case !ok:
		return s.oidcRefused("unknown or expired flow")
	case subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(f.state)) != 1:
		return s.oidcRefused("wrong state")
	case q.Get("error") != "":
		return s.oidcRefused("the provider refused: " + q.Get("error"))
	case q.Get("code") == "":
		return s.oidcRefused("no code")
	}
	conf, verifier, err := s.oidc.client(r.Context())
	if err != nil {
		s.o.Logger.Warn("OIDC sign-in", "err", err)
		return "", time.Time{}, http.StatusServiceUnavailable, errUnavailable
	}
	ctx := r.Context()
	if s.oidc.cfg.HTTPClient != nil {
		ctx = oidc.ClientContext(ctx, s.oidc.cfg.HTTPClient)
	}
	tok, err := conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(f.verifier))
	if err != nil {
		return s.oidcRefused("exchange the code: " + err.Error())
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return s.oidcRefused("no ID token")
	}
	idt, err := verifier.Verify(ctx, raw)
	if err != nil {
		return s.oidcRefused("verify the ID token: " + err.Error())
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(f.nonce)) != 1 {
		return s.oidcRefused("wrong nonce")
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return s.oidcRefused("read the claims: " + err.Error())
	}
	claim := s.oidc.cfg.UserClaim
	if claim == "" {
		claim = "preferred_username"
	}
	user, _ := claims[claim].(string)
	if user == "" || strings.ContainsAny(user, " \t\r\n/,") {
		return s.oidcRefused("no Slurm user name in claim " + claim)
	}
	return user, s.now().Add(sessionTTL), 0, nil
}

// oidcRefused counts and logs a refused callback (why, for the admin)
// and answers 401 with the fixed errOIDC.
func (s *Server) oidcRefused(why string) (string, time.Time, int, error) {
	s.o.Metrics.authFailures.WithLabelValues("oidc").Inc()
	s.o.Logger.Info("OIDC sign-in refused", "why", why)
	return "", time.Time{}, http.StatusUnauthorized, errOIDC
}

// loginPage is the sign-in form's data with err shown (nil: none).
func (s *Server) loginPage(err error) loginData {
	d := loginData{OIDC: s.oidc != nil}
	if err != nil {
		d.Error = err.Error()
	}
	return d
}
