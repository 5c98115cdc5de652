//go:build integration

package main

// Sign-in on the testbed beside the browser test: an RS256 Slurm JWT
// verified through the JWKS file of portal.jwksFile (the key pair made
// here, as a site's identity service would sign), next to the real
// `scontrol token` (HS256) of the same daemon.

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// rs256Site is a key pair and its JWKS file, named by
// GPUBRIDGE_PORTAL_JWKS_FILE for the daemon the test starts next.
type rs256Site struct {
	key *rsa.PrivateKey
	kid string
}

func newRS256Site(t *testing.T) *rs256Site {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s := &rs256Site{key: k, kid: "it-site-1"}
	b, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: s.kid, Algorithm: "RS256", Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GPUBRIDGE_PORTAL_JWKS_FILE", file)
	return s
}

// token signs an RS256 JWT of user (key: another key than the site's).
func (s *rs256Site) token(t *testing.T, key *rsa.PrivateKey, user string, life time.Duration) string {
	t.Helper()
	now := time.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"sun": user, "iat": now.Unix(), "exp": now.Add(life).Unix()})
	tok.Header["kid"] = s.kid
	raw, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// formClient is a browser without JavaScript: a cookie jar, no redirects.
func formClient(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// formDo sends a request as the page does (same origin) and returns the
// status and body.
func formDo(t *testing.T, c *http.Client, method, u string, form url.Values) (int, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := c.Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestPortalRS256SignIn: erin (tenant A) signs in with an RS256 JWT of
// the site's JWKS key, in the portal and as an API bearer; the same
// daemon still takes erin's real `scontrol token`; a token of another key
// and bob's token on A are refused.
func TestPortalRS256SignIn(t *testing.T) {
	site := newRS256Site(t)
	h := newAPIIT(t)
	base := "http://" + h.addr
	good := site.token(t, site.key, "erin", time.Hour)
	if code, body := h.do("GET", "/api/v1/tenants/"+itA, good, ""); code != 200 || !strings.Contains(body, `"`+itA+`"`) {
		t.Fatalf("erin's RS256 JWT on A: %d\n%s", code, body)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		tok  string
		path string
		want int
	}{
		"another key":     {site.token(t, other, "erin", time.Hour), "/api/v1/tenants/" + itA, 401},
		"bob on A":        {site.token(t, site.key, "bob", time.Hour), "/api/v1/tenants/" + itA, 404},
		"user in no team": {site.token(t, site.key, "nobody-pa", time.Hour), "/api/v1/tenants/" + itA, 403},
	} {
		if code, body := h.do("GET", c.path, c.tok, ""); code != c.want || strings.Contains(body, bSecret) {
			t.Errorf("%s: %d; want %d\n%s", name, code, c.want, body)
		}
	}
	hs := strings.TrimPrefix(strings.TrimSpace(h.env.Exec(t, "", "scontrol", "token", "username=erin", "lifespan=900")), "SLURM_JWT=")
	if code, body := h.do("GET", "/api/v1/tenants/"+itA+"/bookings", hs, ""); code != 200 {
		t.Errorf("erin's scontrol token beside the JWKS: %d\n%s", code, body)
	}
	c := formClient(t)
	if code, body := formDo(t, c, "POST", base+"/login", url.Values{"token": {good}}); code != http.StatusSeeOther {
		t.Fatalf("portal sign-in with RS256: %d\n%.500s", code, body)
	}
	code, page := formDo(t, c, "GET", base+"/", nil)
	if code != 200 || !strings.Contains(page, `Signed in as <span id="person">erin</span>`) || !strings.Contains(page, itA) || strings.Contains(page, bSecret) || strings.Contains(page, itB) {
		t.Errorf("erin's page: %d\n%.800s", code, page)
	}
}

// TestPortalMembersReconcile: tenant t28mem (users grace and heidi, admin heidi)
// is applied; `gpubridge serve` runs on the same store; heidi, signed in
// with her real `scontrol token`, adds frank through the API: the audit
// log names user heidi, the next plan adds frank's association and apply
// makes it, after which the plan has nothing for the tenant (the
// association is never planned for deletion); frank signs in at once
// (API and portal); grace (a member) may not add anyone; heidi removes
// frank, and frank's session and JWT are refused on their next request.
func TestPortalMembersReconcile(t *testing.T) {
	const tn = "t28mem"
	h := newTenantIT(t, tn)
	h.ok("-i", "add", "tenant", tn, "users=grace,heidi", "admins=heidi", "gpus=h100:1", "description=portal members")
	h.apply()
	cfg := filepath.Join(t.TempDir(), "gpubridge.yaml")
	y := "version: 1\nserver:\n  shutdownTimeout: 15s\nschedules:\n  reconcile: \"\"\n  burst: \"\"\n  ingest: \"\"\n  closePeriod: \"\"\n  bookings: \"\"\napi:\n  refreshInterval: 1s\n"
	if err := os.WriteFile(cfg, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, log := serveInBackground(t, t.Context(), cfg)
	base := "http://" + addr
	waitHealthy(t, base, log)
	jwtOf := func(user string) string {
		return strings.TrimPrefix(strings.TrimSpace(h.env.Exec(t, "", "scontrol", "token", "username="+user, "lifespan=900")), "SLURM_JWT=")
	}
	heidi, frank, grace := jwtOf("heidi"), jwtOf("frank"), jwtOf("grace")
	api := func(method, path, tok, body string) (int, string) {
		t.Helper()
		r, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+tok)
		resp, err := apiClient.Do(r)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	members := "/api/v1/tenants/" + tn + "/members"
	if code, body := api("GET", "/api/v1/tenants/"+tn, frank, ""); code != 403 {
		t.Fatalf("frank before: %d %s", code, body)
	}
	if code, body := api("POST", members, grace, `{"user":"frank"}`); code != 403 {
		t.Errorf("grace (a member) adds frank: %d %s", code, body)
	}
	if code, body := api("POST", members, heidi, `{"user":"frank"}`); code != 201 {
		t.Fatalf("heidi adds frank: %d %s\n%s", code, body, log)
	}
	if out := h.ok("-P", "-n", "show", "audit", "tenant="+tn, "limit=1"); !strings.Contains(out, "|user heidi|modify|tenant|"+tn+"|") || !strings.Contains(out, "frank") {
		t.Errorf("the audit row of heidi's change: %q", out)
	}
	if got := mine(h.plan().Changes, tn); len(got) != 1 || !strings.Contains(got[0], "frank") || !strings.HasPrefix(got[0], "+ user frank") {
		t.Errorf("plan after the API's change: %q; want frank's association added", got)
	}
	h.apply()
	if out := h.env.Exec(t, "", "sacctmgr", "-nP", "show", "assoc", "account="+tn, "user=frank", "format=user"); strings.TrimSpace(out) != "frank" {
		t.Errorf("frank's association after apply: %q", out)
	}
	if got := mine(h.plan().Changes, tn); len(got) != 0 {
		t.Errorf("plan after apply: %q; want nothing (never frank's deletion)", got)
	}
	if code, body := api("GET", "/api/v1/tenants/"+tn+"/bookings", frank, ""); code != 200 {
		t.Errorf("frank once added: %d %s", code, body)
	}
	c := formClient(t)
	if code, body := formDo(t, c, "POST", base+"/login", url.Values{"token": {frank}}); code != http.StatusSeeOther {
		t.Fatalf("frank signs in: %d %.300s", code, body)
	}
	if code, page := formDo(t, c, "GET", base+"/", nil); code != 200 || !strings.Contains(page, `<span id="person">frank</span>`) {
		t.Errorf("frank's page: %d %.300s", code, page)
	}
	if code, body := api("DELETE", members+"/heidi", heidi, ""); code != 403 {
		t.Errorf("heidi removes an admin: %d %s", code, body)
	}
	if code, body := api("DELETE", members+"/frank", heidi, ""); code != 200 {
		t.Fatalf("heidi removes frank: %d %s", code, body)
	}
	if code, page := formDo(t, c, "GET", base+"/", nil); code != 403 || strings.Contains(page, `<span id="person">frank</span>`) {
		t.Errorf("frank's session after his removal: %d %.300s", code, page)
	}
	if code, _ := api("GET", "/api/v1/tenants/"+tn, frank, ""); code != 403 {
		t.Errorf("frank's JWT after his removal: %d", code)
	}
}

// waitHealthy waits until the serve at base answers /healthz.
func waitHealthy(t *testing.T, base string, log *lockedBuffer) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := apiClient.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("serve did not answer /healthz within 30 s:\n%s", log)
}

// TestPortalIsolationInBrowser: with tenant A's member erin signed in
// (Chromium, a real `scontrol token`), no page, form answer or calendar
// refresh shows anything of tenant B (its name, its booking's purpose),
// asserted on the DOM's text and the answers' bytes; a forged CSRF token
// changes nothing; an expired JWT, a JWT of a user in no tenant and one
// signed with another key are refused at the sign-in form.
func TestPortalIsolationInBrowser(t *testing.T) {
	h := newAPIIT(t)
	base := "http://" + h.addr
	code, body := h.do("POST", "/api/v1/tenants/"+itB+"/bookings", h.tokens["b-book"], `{"gpus":"h100:1","start":"now+3h","duration":"1h","purpose":"`+bSecret+` run"}`)
	m := regexp.MustCompile(`"id":(\d+)`).FindStringSubmatch(body)
	if code != 201 || m == nil {
		t.Fatalf("B's booking: %d %s", code, body)
	}
	erin := newPortalBrowser(t)
	erin.signIn(h, h.addr, "erin")
	for _, path := range []string{"/", "/?tenant=" + itB, "/portal/free", "/portal/free?tenant=" + itB, "/cancel?tenant=" + itA + "&id=" + m[1],
		"/cancel?tenant=" + itB + "&id=" + m[1], "/members?tenant=" + itA, "/members?tenant=" + itB} {
		erin.do("open "+path, chromedp.Navigate(base+path), chromedp.WaitReady(chromedp.CSS("body")))
		html := get(erin, "the DOM of "+path, chromedp.OuterHTML(chromedp.CSS("html")))
		text := get(erin, "the text of "+path, chromedp.Text(chromedp.CSS("body")))
		for _, secret := range []string{bSecret, itB, "bob"} {
			if strings.Contains(html, secret) || strings.Contains(text, secret) {
				t.Errorf("%s shows B's %q:\n%.1500s", path, secret, html)
			}
		}
	}
	// Forged CSRF: the sign-out form with another token is refused, and
	// erin is still signed in.
	erin.do("forge the CSRF token", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#calendar")),
		chromedp.SetAttributeValue(chromedp.CSS(`form[action="/logout"] input[name="csrf"]`), "value", "forged"),
		chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)), chromedp.WaitVisible(chromedp.CSS(".err")))
	if msg := erin.text(".err"); !strings.Contains(msg, "not from this session") {
		t.Errorf("forged CSRF: %q", msg)
	}
	erin.do("still signed in", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#calendar")))

	key, err := os.ReadFile(h.env.JWTKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	hs := func(key []byte, user string, iat time.Time) string {
		raw, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sun": user, "iat": iat.Unix(), "exp": iat.Add(time.Hour).Unix()}).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	nobody := strings.TrimPrefix(strings.TrimSpace(h.env.Exec(t, "", "scontrol", "token", "username=alice", "lifespan=900")), "SLURM_JWT=")
	stranger := newPortalBrowser(t)
	for name, c := range map[string]struct{ raw, want string }{
		"expired JWT":       {hs(key, "erin", time.Now().Add(-3*time.Hour)), "not valid here"},
		"user in no tenant": {nobody, "not a member of any tenant"},
		"another key":       {hs([]byte("another-site-s-key-of-32-bytes-long!"), "erin", time.Now()), "not valid here"},
	} {
		stranger.do("sign in with "+name, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#token")),
			chromedp.SetValue(chromedp.CSS("#token"), c.raw), chromedp.Click(chromedp.CSS(`form[action="/login"] button`)),
			chromedp.WaitVisible(chromedp.CSS(".err")))
		if msg := stranger.text(".err"); !strings.Contains(msg, c.want) {
			t.Errorf("%s: %q; want %q", name, msg, c.want)
		}
		if html := get(stranger, "the page", chromedp.OuterHTML(chromedp.CSS("html"))); strings.Contains(html, `id="calendar"`) || strings.Contains(html, itA) {
			t.Errorf("%s signed in", name)
		}
	}
}
