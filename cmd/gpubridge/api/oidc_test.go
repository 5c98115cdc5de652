package api

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	zoidc "github.com/zitadel/oidc/v3/pkg/oidc"
)

// oidcHarness is the API harness with sign-in through a real OpenID
// provider (newTestOP) whose users are heidi (preferred_username alice,
// acme's member), ivan (preferred_username mallory: no tenant) and nina
// (no preferred_username).
func oidcHarness(t *testing.T) (*harness, *testOP) {
	t.Helper()
	h := newHarness(t)
	redirect := h.http.URL + "/oidc/callback"
	p := newTestOP(t, "gpubridge-portal", "portal-secret", redirect, map[string]opUser{
		"heidi": {password: "pw-heidi", preferredUsername: "alice"},
		"ivan":  {password: "pw-ivan", preferredUsername: "mallory"},
		"nina":  {password: "pw-nina"},
	})
	h.srv.oidc = &oidcClient{cfg: OIDC{Issuer: p.URL, ClientID: "gpubridge-portal", ClientSecret: func() (string, error) { return "portal-secret\n", nil },
		RedirectURL: redirect}}
	h.srv.oidcRoutes(h.srv.mux)
	return h, p
}

// oidcBrowser is a browser without JavaScript that follows redirects
// across both servers, keeping their cookies.
type oidcBrowser struct {
	t *testing.T
	c *http.Client
	// stop: signIn stops before the portal's callback.
	stop bool
}

func newOIDCBrowser(t *testing.T) *oidcBrowser {
	jar, _ := cookiejar.New(nil)
	return &oidcBrowser{t: t, c: &http.Client{Jar: jar}}
}

// send runs a request and returns the final status, URL and body.
func (b *oidcBrowser) send(r *http.Request) (int, *url.URL, string) {
	b.t.Helper()
	resp, err := b.c.Do(r)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Request.URL, string(body)
}

func (b *oidcBrowser) get(u string) (int, *url.URL, string) {
	b.t.Helper()
	r, _ := http.NewRequest("GET", u, nil)
	return b.send(r)
}

var opAuthRequestRe = regexp.MustCompile(`name="id" value="([^"]+)"`)

// signIn starts at the portal's link, lands on the provider's login page
// and posts user and password there; it returns the final page (after
// the callback) and the callback's URL seen on the way.
func (b *oidcBrowser) signIn(h *harness, p *testOP, user, password string) (int, string, string) {
	b.t.Helper()
	var callback string
	b.c.CheckRedirect = func(r *http.Request, _ []*http.Request) error {
		if r.URL.Path == "/oidc/callback" {
			callback = r.URL.String()
			if b.stop {
				return http.ErrUseLastResponse
			}
		}
		return nil
	}
	code, at, page := b.get(h.http.URL + "/oidc/login")
	m := opAuthRequestRe.FindStringSubmatch(page)
	if code != 200 || !strings.HasPrefix(at.String(), p.URL+"/login") || m == nil {
		b.t.Fatalf("the provider's login page: %d at %s\n%.500s", code, at, page)
	}
	r, _ := http.NewRequest("POST", p.URL+"/login", strings.NewReader(url.Values{"id": {m[1]}, "username": {user}, "password": {password}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	code, _, page = b.send(r)
	return code, page, callback
}

// TestOIDCSignIn: heidi signs in at a real OpenID provider (zitadel/oidc
// op) through the authorization code flow with PKCE (S256) and lands on
// acme's page as the Slurm user alice (her preferred_username); the
// provider's wrong password, a callback with another state, a callback
// used twice, another browser's callback, an ID token with another nonce,
// a user in no tenant and one without the claim are refused.
func TestOIDCSignIn(t *testing.T) {
	h, p := oidcHarness(t)
	if code, _, page := newOIDCBrowser(t).get(h.http.URL + "/"); code != 200 || !strings.Contains(page, `href="/oidc/login"`) {
		t.Errorf("the sign-in page offers no OIDC link: %d\n%.500s", code, page)
	}
	b := newOIDCBrowser(t)
	code, page, callback := b.signIn(h, p, "heidi", "pw-heidi")
	if code != 200 || !strings.Contains(page, `Signed in as <span id="person">alice</span>`) || !strings.Contains(page, `<h1 id="tenant">acme</h1>`) || strings.Contains(page, "bsecret") {
		t.Fatalf("heidi's sign-in: %d\n%.800s", code, page)
	}
	p.storage.mu.Lock()
	challenges := p.storage.challenges
	p.storage.mu.Unlock()
	if len(challenges) != 1 || challenges[0] != zoidc.CodeChallengeMethodS256 {
		t.Errorf("PKCE methods asked: %v; want [S256]", challenges)
	}
	u, _ := url.Parse(callback)
	if u == nil || u.Query().Get("code") == "" || u.Query().Get("state") == "" {
		t.Fatalf("the callback: %q", callback)
	}
	// The same callback again (the flow is used once).
	if code, _, page := b.get(callback); code != 401 || !strings.Contains(page, "did not complete") {
		t.Errorf("the callback again: %d\n%.300s", code, page)
	}
	// Another browser's callback (a fresh code and that browser's state),
	// a forged state, none: refused by a browser with a flow of its own;
	// the other browser's callback still signs that browser in.
	b2 := newOIDCBrowser(t)
	b2.stop = true
	_, _, cb2 := b2.signIn(h, p, "heidi", "pw-heidi")
	u2, _ := url.Parse(cb2)
	if u2 == nil || u2.Query().Get("code") == "" {
		t.Fatalf("the second browser's callback: %q", cb2)
	}
	for name, q := range map[string]url.Values{
		"another browser's callback": u2.Query(),
		"forged state":               {"code": {u2.Query().Get("code")}, "state": {"forged"}},
		"no state":                   {"code": {u2.Query().Get("code")}},
		"provider error":             {"error": {"access_denied"}},
	} {
		b3 := newOIDCBrowser(t)
		b3.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		if code, _, _ := b3.get(h.http.URL + "/oidc/login"); code != http.StatusFound {
			t.Fatalf("start a flow: %d", code)
		}
		if code, _, page := b3.get(h.http.URL + "/oidc/callback?" + q.Encode()); code != 401 || !strings.Contains(page, `action="/login"`) {
			t.Errorf("%s: %d\n%.300s", name, code, page)
		}
		if _, _, page := b3.get(h.http.URL + "/"); strings.Contains(page, `id="person"`) {
			t.Errorf("%s: signed in", name)
		}
	}
	b2.stop = false
	if code, _, page := b2.get(cb2); code != 200 || !strings.Contains(page, `Signed in as <span id="person">alice</span>`) {
		t.Errorf("the second browser's own callback: %d\n%.300s", code, page)
	}
	// A wrong password stays at the provider; an ID token with another
	// nonce, a user in no tenant and one without the claim are refused.
	if code, _, _ := newOIDCBrowser(t).signIn(h, p, "heidi", "wrong"); code != 403 {
		t.Errorf("wrong password: %d", code)
	}
	for name, c := range map[string]struct {
		user, pw string
		bad      bool
		code     int
		text     string
	}{
		"another nonce": {"heidi", "pw-heidi", true, 401, "did not complete"},
		"no tenant":     {"ivan", "pw-ivan", false, 403, "not a member"},
		"no claim":      {"nina", "pw-nina", false, 401, "did not complete"},
	} {
		p.storage.mu.Lock()
		p.storage.badNonce = c.bad
		p.storage.mu.Unlock()
		code, page, _ := newOIDCBrowser(t).signIn(h, p, c.user, c.pw)
		if code != c.code || !strings.Contains(page, c.text) || strings.Contains(page, `id="person"`) {
			t.Errorf("%s: %d; want %d with %q\n%.300s", name, code, c.code, c.text, page)
		}
	}
}
