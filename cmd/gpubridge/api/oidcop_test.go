package api

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"html/template"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	zoidc "github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// A real OpenID provider for the OIDC tests: zitadel/oidc's op package
// (an OpenID-certified provider library) on a small storage of this
// test's: one web client (the portal, client_secret_basic, http redirect
// allowed: dev mode), users by password, auth requests and codes in
// memory, one RSA signing key. Its login page is a form (user, password)
// that a test's browser posts.

// testOP is the running provider.
type testOP struct {
	URL     string
	storage *opStorage
}

// opUser is a user of the provider: the password and the
// preferred_username it asserts.
type opUser struct {
	password, preferredUsername string
}

// newTestOP starts a provider whose client clientID/secret may redirect
// to redirectURI.
func newTestOP(t *testing.T, clientID, secret, redirectURI string, users map[string]opUser) *testOP {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	st := &opStorage{key: key, client: &opClient{id: clientID, secret: secret, redirect: redirectURI}, users: users,
		requests: map[string]*opAuthRequest{}, codes: map[string]string{}}
	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	cfg := &op.Config{CodeMethodS256: true, SupportedScopes: []string{"openid", "profile"}}
	if _, err := rand.Read(cfg.CryptoKey[:]); err != nil {
		t.Fatal(err)
	}
	provider, err := op.NewProvider(cfg, st, op.StaticIssuer(srv.URL), op.WithAllowInsecure())
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/login", st.loginHandler(op.AuthCallbackURL(provider)))
	mux.Handle("/", provider)
	handler = mux
	return &testOP{URL: srv.URL, storage: st}
}

var opLoginPage = template.Must(template.New("login").Parse(`<!doctype html><title>Test OP</title>
<form method="post" action="/login"><input type="hidden" name="id" value="{{.}}">
<input name="username"><input name="password" type="password"><button>Sign in</button></form>`))

// loginHandler is the provider's login page: GET shows the form of an
// auth request, POST checks the password and finishes the request.
func (s *opStorage) loginHandler(callback func(context.Context, string) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_ = opLoginPage.Execute(w, r.URL.Query().Get("authRequestID"))
			return
		}
		id, user, pass := r.PostFormValue("id"), r.PostFormValue("username"), r.PostFormValue("password")
		s.mu.Lock()
		u, okUser := s.users[user]
		req, okReq := s.requests[id]
		if okUser && okReq && u.password == pass {
			req.subject, req.done, req.authTime = user, true, time.Now()
		}
		s.mu.Unlock()
		if !okUser || !okReq || u.password != pass {
			http.Error(w, "wrong user or password", http.StatusForbidden)
			return
		}
		http.Redirect(w, r, callback(r.Context(), id), http.StatusFound)
	})
}

// opStorage is the provider's op.Storage.
type opStorage struct {
	key    *rsa.PrivateKey
	client *opClient
	users  map[string]opUser

	mu       sync.Mutex
	requests map[string]*opAuthRequest
	codes    map[string]string // code -> request id
	// challenges are the PKCE methods of the auth requests made;
	// badNonce makes the ID tokens carry another nonce than asked.
	challenges []zoidc.CodeChallengeMethod
	badNonce   bool
}

var _ op.Storage = (*opStorage)(nil)

var errOPNotFound = errors.New("not found")

func (s *opStorage) CreateAuthRequest(_ context.Context, r *zoidc.AuthRequest, _ string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req := &opAuthRequest{id: randomID(), r: *r, created: time.Now(), s: s}
	s.requests[req.id] = req
	s.challenges = append(s.challenges, r.CodeChallengeMethod)
	return req, nil
}

func (s *opStorage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.requests[id]; ok {
		return r, nil
	}
	return nil, errOPNotFound
}

func (s *opStorage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	id, ok := s.codes[code]
	s.mu.Unlock()
	if !ok {
		return nil, errOPNotFound
	}
	return s.AuthRequestByID(ctx, id)
}

func (s *opStorage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = id
	return nil
}

func (s *opStorage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.requests, id)
	for c, rid := range s.codes {
		if rid == id {
			delete(s.codes, c)
		}
	}
	return nil
}

func (s *opStorage) CreateAccessToken(context.Context, op.TokenRequest) (string, time.Time, error) {
	return randomID(), time.Now().Add(5 * time.Minute), nil
}

func (s *opStorage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, errors.New("no refresh tokens here")
}

func (s *opStorage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, op.ErrInvalidRefreshToken
}

func (s *opStorage) TerminateSession(context.Context, string, string) error { return nil }

func (s *opStorage) RevokeToken(context.Context, string, string, string) *zoidc.Error { return nil }

func (s *opStorage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}

func (s *opStorage) SigningKey(context.Context) (op.SigningKey, error) { return opSigner{s.key}, nil }

func (s *opStorage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *opStorage) KeySet(context.Context) ([]op.Key, error) { return []op.Key{opPublic{s.key}}, nil }

func (s *opStorage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	if id != s.client.id {
		return nil, errOPNotFound
	}
	return s.client, nil
}

func (s *opStorage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	if id != s.client.id || secret != s.client.secret {
		return errors.New("wrong client or secret")
	}
	return nil
}

func (s *opStorage) SetUserinfoFromScopes(_ context.Context, u *zoidc.UserInfo, user, _ string, scopes []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	u.Subject = user
	for _, sc := range scopes {
		if sc == zoidc.ScopeProfile {
			u.PreferredUsername = s.users[user].preferredUsername
		}
	}
	return nil
}

func (s *opStorage) SetUserinfoFromToken(ctx context.Context, u *zoidc.UserInfo, _, subject, _ string) error {
	return s.SetUserinfoFromScopes(ctx, u, subject, "", []string{zoidc.ScopeProfile})
}

func (s *opStorage) SetIntrospectionFromToken(context.Context, *zoidc.IntrospectionResponse, string, string, string) error {
	return errors.New("no introspection here")
}

func (s *opStorage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

func (s *opStorage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errOPNotFound
}

func (s *opStorage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("no JWT profile here")
}

func (s *opStorage) Health(context.Context) error { return nil }

// opAuthRequest is one auth request of the provider.
type opAuthRequest struct {
	id       string
	r        zoidc.AuthRequest
	created  time.Time
	subject  string
	done     bool
	authTime time.Time
	s        *opStorage
}

var _ op.AuthRequest = (*opAuthRequest)(nil)

func (a *opAuthRequest) GetID() string          { return a.id }
func (a *opAuthRequest) GetACR() string         { return "" }
func (a *opAuthRequest) GetAMR() []string       { return []string{"pwd"} }
func (a *opAuthRequest) GetAudience() []string  { return []string{a.r.ClientID} }
func (a *opAuthRequest) GetAuthTime() time.Time { return a.authTime }
func (a *opAuthRequest) GetClientID() string    { return a.r.ClientID }
func (a *opAuthRequest) GetCodeChallenge() *zoidc.CodeChallenge {
	if a.r.CodeChallenge == "" {
		return nil
	}
	return &zoidc.CodeChallenge{Challenge: a.r.CodeChallenge, Method: a.r.CodeChallengeMethod}
}
func (a *opAuthRequest) GetNonce() string {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	if a.s.badNonce {
		return "another-nonce"
	}
	return a.r.Nonce
}
func (a *opAuthRequest) GetRedirectURI() string              { return a.r.RedirectURI }
func (a *opAuthRequest) GetResponseType() zoidc.ResponseType { return a.r.ResponseType }
func (a *opAuthRequest) GetResponseMode() zoidc.ResponseMode { return a.r.ResponseMode }
func (a *opAuthRequest) GetScopes() []string                 { return a.r.Scopes }
func (a *opAuthRequest) GetState() string                    { return a.r.State }
func (a *opAuthRequest) GetSubject() string                  { return a.subject }
func (a *opAuthRequest) Done() bool                          { return a.done }

// opClient is the portal as the provider's client.
type opClient struct{ id, secret, redirect string }

var _ op.Client = (*opClient)(nil)

func (c *opClient) GetID() string                       { return c.id }
func (c *opClient) RedirectURIs() []string              { return []string{c.redirect} }
func (c *opClient) PostLogoutRedirectURIs() []string    { return nil }
func (c *opClient) ApplicationType() op.ApplicationType { return op.ApplicationTypeWeb }
func (c *opClient) AuthMethod() zoidc.AuthMethod        { return zoidc.AuthMethodBasic }
func (c *opClient) ResponseTypes() []zoidc.ResponseType {
	return []zoidc.ResponseType{zoidc.ResponseTypeCode}
}
func (c *opClient) GrantTypes() []zoidc.GrantType        { return []zoidc.GrantType{zoidc.GrantTypeCode} }
func (c *opClient) LoginURL(id string) string            { return "/login?authRequestID=" + id }
func (c *opClient) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeBearer }
func (c *opClient) IDTokenLifetime() time.Duration       { return 5 * time.Minute }
func (c *opClient) DevMode() bool                        { return true }
func (c *opClient) IsScopeAllowed(string) bool           { return false }
func (c *opClient) IDTokenUserinfoClaimsAssertion() bool { return true }
func (c *opClient) ClockSkew() time.Duration             { return 0 }
func (c *opClient) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *opClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// opSigner is the provider's RSA key for signing; opPublic its public
// half in the provider's JWKS.
type opSigner struct{ k *rsa.PrivateKey }

func (k opSigner) ID() string                                  { return "op-1" }
func (k opSigner) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k opSigner) Key() any                                    { return k.k }

type opPublic struct{ k *rsa.PrivateKey }

func (k opPublic) ID() string                         { return "op-1" }
func (k opPublic) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k opPublic) Use() string                        { return "sig" }
func (k opPublic) Key() any                           { return &k.k.PublicKey }
