package api

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// rsaKey makes an RSA key pair for a test (2048 bits, as identity
// services sign with).
func rsaKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// jwksOf is a JWKS document of keys' public halves, by kid.
func jwksOf(t *testing.T, keys map[string]*rsa.PrivateKey) []byte {
	t.Helper()
	var set jose.JSONWebKeySet
	for kid, k := range keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: kid, Algorithm: string(jose.RS256), Use: "sig"})
	}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// signed signs claims with method and key, with header kid when not empty.
func signed(t *testing.T, method jwt.SigningMethod, key any, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRS256ThroughJWKS: an RS256 Slurm JWT signed by a key of the
// configured JWKS signs in (API bearer and portal), beside HS256; one
// signed with another key, expired, alg none, without kid or with a kid
// not in the JWKS, RS512, and an HS256 token that names the RSA key's kid
// (signed with the site's HS256 key, or with the RSA public key as its
// HMAC secret) are refused.
func TestRS256ThroughJWKS(t *testing.T) {
	site, other := rsaKey(t), rsaKey(t)
	doc := jwksOf(t, map[string]*rsa.PrivateKey{"site-1": site})
	withJWKS := func(t *testing.T) *harness {
		h := newHarness(t)
		h.srv.o.JWKS = func() ([]byte, error) { return doc, nil }
		return h
	}
	h := withJWKS(t)
	claims := func(user string, iat time.Time, life time.Duration) jwt.MapClaims {
		return jwt.MapClaims{"sun": user, "iat": iat.Unix(), "exp": iat.Add(life).Unix()}
	}
	good := signed(t, jwt.SigningMethodRS256, site, "site-1", claims("alice", h.now, time.Hour))
	pubDER, err := x509.MarshalPKIXPublicKey(&site.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	none := signed(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "site-1", claims("alice", h.now, time.Hour))
	for name, tc := range map[string]struct {
		raw  string
		code int
	}{
		"another key":            {signed(t, jwt.SigningMethodRS256, other, "site-1", claims("alice", h.now, time.Hour)), 401},
		"kid not in the JWKS":    {signed(t, jwt.SigningMethodRS256, other, "site-2", claims("alice", h.now, time.Hour)), 401},
		"no kid":                 {signed(t, jwt.SigningMethodRS256, site, "", claims("alice", h.now, time.Hour)), 401},
		"expired":                {signed(t, jwt.SigningMethodRS256, site, "site-1", claims("alice", h.now.Add(-2*time.Hour), time.Hour)), 401},
		"alg none":               {none, 401},
		"RS512":                  {signed(t, jwt.SigningMethodRS512, site, "site-1", claims("alice", h.now, time.Hour)), 401},
		"HS256 with RS kid":      {signed(t, jwt.SigningMethodHS256, testJWTKey, "site-1", claims("alice", h.now, time.Hour)), 401},
		"HS256 keyed by RSA pub": {signed(t, jwt.SigningMethodHS256, pubDER, "site-1", claims("alice", h.now, time.Hour)), 401},
		"no user":                {signed(t, jwt.SigningMethodRS256, site, "site-1", jwt.MapClaims{"iat": h.now.Unix(), "exp": h.now.Add(time.Hour).Unix()}), 401},
		"no tenant":              {signed(t, jwt.SigningMethodRS256, site, "site-1", claims("mallory", h.now, time.Hour)), 403},
	} {
		h := withJWKS(t) // a fresh failure count per case
		if code, body := h.do("GET", "/api/v1/tenants/acme", tc.raw, ""); code != tc.code {
			t.Errorf("%s: API %d; want %d\n%s", name, code, tc.code, body)
		}
		b := newBrowser(h)
		want := "not valid here"
		if tc.code == 403 {
			want = "not a member"
		}
		if code, body, _ := b.post("/login", url.Values{"token": {tc.raw}}); code != tc.code || !strings.Contains(body, `action="/login"`) || !strings.Contains(body, want) {
			t.Errorf("%s: sign-in %d; want %d and the form again\n%.300s", name, code, tc.code, body)
		}
	}
	// The username claim (Slurm's default userclaimfield is sun) is taken too.
	byUsername := signed(t, jwt.SigningMethodRS256, site, "site-1", jwt.MapClaims{"username": "alice", "iat": h.now.Unix(), "exp": h.now.Add(time.Hour).Unix()})
	for name, raw := range map[string]string{"RS256": good, "RS256 username": byUsername, "HS256 beside": slurmJWT(t, testJWTKey, "alice", h.now, time.Hour)} {
		if code, body := h.do("GET", "/api/v1/tenants/acme", raw, ""); code != 200 {
			t.Errorf("%s: %d; want 200\n%s", name, code, body)
		}
	}
	b := newBrowser(h)
	b.signIn(good)
	if _, page := b.get("/"); !strings.Contains(page, `Signed in as <span id="person">alice</span>`) {
		t.Errorf("signed in with RS256:\n%.500s", page)
	}
	// Without a JWKS an RS256 token is refused; without either key, so is HS256.
	h = newHarness(t)
	if code, _ := h.do("GET", "/api/v1/tenants/acme", good, ""); code != 401 {
		t.Errorf("RS256 without a JWKS: %d; want 401", code)
	}
	h = newHarness(t)
	h.srv.o.JWTKey = nil
	h.srv.o.JWKS = func() ([]byte, error) { return doc, nil }
	if code, _ := h.do("GET", "/api/v1/tenants/acme", slurmJWT(t, testJWTKey, "alice", h.now, time.Hour), ""); code != 401 {
		t.Errorf("HS256 with only a JWKS: %d; want 401", code)
	}
	if code, _ := h.do("GET", "/api/v1/tenants/acme", good, ""); code != 200 {
		t.Errorf("RS256 with only a JWKS: %d; want 200", code)
	}
}

// TestParseJWKS: only RSA signature keys with a kid are taken; a document
// with none, or not JSON, is an error; a broken JWKS file answers 503,
// never lets a token in.
func TestParseJWKS(t *testing.T) {
	k := rsaKey(t)
	mixed, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &k.PublicKey, KeyID: "enc", Use: "enc"},
		{Key: &k.PublicKey, KeyID: "ps", Algorithm: string(jose.PS256)},
		{Key: []byte("an-hmac-secret-in-the-jwks-32-bytes"), KeyID: "oct", Algorithm: string(jose.HS256)},
		{Key: &k.PublicKey, KeyID: "", Use: "sig"},
		{Key: &k.PublicKey, KeyID: "good", Use: "sig"},
	}})
	keys, err := parseJWKS(mixed)
	if err != nil || len(keys) != 1 || keys["good"] == nil {
		t.Errorf("mixed: %v %v; want only good", keys, err)
	}
	onlyOct, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: []byte("an-hmac-secret-in-the-jwks-32-bytes"), KeyID: "oct"}}})
	for name, doc := range map[string][]byte{"no RSA key": onlyOct, "not JSON": []byte("-----BEGIN PUBLIC KEY-----"), "empty": []byte(`{"keys":[]}`)} {
		if _, err := parseJWKS(doc); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	h := newHarness(t)
	h.srv.o.JWKS = func() ([]byte, error) { return []byte("{"), nil }
	tok := signed(t, jwt.SigningMethodRS256, k, "good", jwt.MapClaims{"sun": "alice", "iat": h.now.Unix(), "exp": h.now.Add(time.Hour).Unix()})
	if code, _ := h.do("GET", "/api/v1/tenants/acme", tok, ""); code != 503 {
		t.Errorf("a broken JWKS: %d; want 503", code)
	}
}
