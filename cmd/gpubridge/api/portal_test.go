package api

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
)

// slurmJWT is what `scontrol token username=user` gives on a site whose
// key is key: HS256, sun, iat now, exp now+life.
func slurmJWT(t *testing.T, key []byte, user string, iat time.Time, life time.Duration) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sun": user, "iat": iat.Unix(), "exp": iat.Add(life).Unix()}).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// browser is a client with a cookie jar that does not follow redirects.
type browser struct {
	t *testing.T
	h *harness
	c *http.Client
}

func newBrowser(h *harness) *browser {
	jar, _ := cookiejar.New(nil)
	c := h.http.Client()
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &browser{t: h.t, h: h, c: c}
}

func (b *browser) get(path string) (int, string) {
	b.t.Helper()
	resp, err := b.c.Get(b.h.http.URL + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// post sends a form as the page does (same origin) and returns the
// status, the body and the redirect's target.
func (b *browser) post(path string, form url.Values) (int, string, string) {
	b.t.Helper()
	r, _ := http.NewRequest("POST", b.h.http.URL+path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := b.c.Do(r)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header.Get("Location")
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signIn posts raw to /login and returns the overview's CSRF token.
func (b *browser) signIn(raw string) string {
	b.t.Helper()
	code, body, _ := b.post("/login", url.Values{"token": {raw}})
	if code != http.StatusSeeOther {
		b.t.Fatalf("sign-in: %d\n%s", code, body)
	}
	code, body = b.get("/")
	m := csrfRe.FindStringSubmatch(body)
	if code != 200 || m == nil {
		b.t.Fatalf("overview after sign-in: %d\n%s", code, body)
	}
	return m[1]
}

// TestJWTSignIn: a Slurm JWT of a tenant's user signs in to that tenant,
// in the portal and as an API bearer; an expired one, one of another
// key, alg none or HS512, one issued in the future, one without a user
// and one of a user in no tenant are refused.
func TestJWTSignIn(t *testing.T) {
	h := newHarness(t)
	good := slurmJWT(t, testJWTKey, "alice", h.now, time.Hour)
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sun": "alice", "iat": h.now.Unix(), "exp": h.now.Add(time.Hour).Unix()}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	hs512, _ := jwt.NewWithClaims(jwt.SigningMethodHS512, jwt.MapClaims{"sun": "alice", "iat": h.now.Unix(), "exp": h.now.Add(time.Hour).Unix()}).SignedString(testJWTKey)
	noUser, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iat": h.now.Unix(), "exp": h.now.Add(time.Hour).Unix()}).SignedString(testJWTKey)
	noExp, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sun": "alice", "iat": h.now.Unix()}).SignedString(testJWTKey)
	for name, tc := range map[string]struct {
		raw  string
		code int
	}{
		"expired":       {slurmJWT(t, testJWTKey, "alice", h.now.Add(-2*time.Hour), time.Hour), 401},
		"another key":   {slurmJWT(t, []byte("another-site-s-key-of-32-bytes-long"), "alice", h.now, time.Hour), 401},
		"alg none":      {none, 401},
		"alg HS512":     {hs512, 401},
		"iat in future": {slurmJWT(t, testJWTKey, "alice", h.now.Add(time.Hour), time.Hour), 401},
		"no user":       {noUser, 401},
		"no exp":        {noExp, 401},
		"no tenant":     {slurmJWT(t, testJWTKey, "mallory", h.now, time.Hour), 403},
	} {
		h := newHarness(t) // a fresh failure count per case: 5 failures trip the address's limit
		if code, body := h.do("GET", "/api/v1/tenants/acme", tc.raw, ""); code != tc.code {
			t.Errorf("%s: API %d; want %d\n%s", name, code, tc.code, body)
		}
		b := newBrowser(h)
		if code, body, _ := b.post("/login", url.Values{"token": {tc.raw}}); code != tc.code || !strings.Contains(body, `action="/login"`) {
			t.Errorf("%s: sign-in %d; want %d and the form again\n%s", name, code, tc.code, body)
		}
		if code, body := b.get("/"); code != 200 || !strings.Contains(body, `action="/login"`) {
			t.Errorf("%s: signed in anyway: %d", name, code)
		}
	}
	// A little clock skew is taken.
	if code, _ := h.do("GET", "/api/v1/tenants/acme", slurmJWT(t, testJWTKey, "alice", h.now.Add(20*time.Second), time.Hour), ""); code != 200 {
		t.Errorf("iat 20 s ahead: %d; want 200", code)
	}
	// As an API bearer: the person's tenant, read and book; never another.
	if code, body := h.do("GET", "/api/v1/tenants/acme/bookings", good, ""); code != 200 || !strings.Contains(body, `"acme run"`) {
		t.Errorf("alice's JWT on acme's bookings: %d\n%s", code, body)
	}
	for _, path := range []string{"/api/v1/tenants/beta", "/api/v1/tenants/beta/bookings", "/api/v1/tenants/acme/bookings/" + strconv.FormatInt(h.betaBooking.ID, 10), "/api/v1/pool"} {
		if code, body := h.do("GET", path, good, ""); code != 404 && code != 403 {
			t.Errorf("alice's JWT on %s: %d; want 404 (403 for the pool)\n%s", path, code, body)
		}
	}
	code, body := h.do("POST", "/api/v1/tenants/acme/bookings", good, `{"gpus":"h100:1","start":"now+5h","duration":"1h","purpose":"by jwt"}`)
	if code != 201 || !strings.Contains(body, `"createdBy":"user alice"`) {
		t.Errorf("a booking with alice's JWT: %d; want 201 made by user alice\n%s", code, body)
	}
	// In the portal: the person's name, the tenant's page.
	b := newBrowser(h)
	b.signIn(good)
	code, body = b.get("/")
	if code != 200 || !strings.Contains(body, `<h1 id="tenant">acme</h1>`) || !strings.Contains(body, `Signed in as <span id="person">alice</span>`) || strings.Contains(body, good) {
		t.Errorf("alice's overview: %d\n%s", code, body)
	}
	// The session dies with the JWT.
	h.setNow(h.now.Add(61 * time.Minute))
	if code, body := b.get("/"); !strings.Contains(body, `action="/login"`) || !strings.Contains(body, "session has ended") {
		t.Errorf("after the JWT's exp: %d\n%s", code, body)
	}
}

// TestPortalCSRF: a signed-in browser's forms need the session's CSRF
// token; without it nothing is booked, cancelled or signed out; the
// pages carry a CSP without unsafe-inline.
func TestPortalCSRF(t *testing.T) {
	h := newHarness(t)
	b := newBrowser(h)
	csrf := b.signIn(slurmJWT(t, testJWTKey, "alice", h.now, time.Hour))
	resp, err := b.c.Get(h.http.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if p := resp.Header.Get("Content-Security-Policy"); p != csp || strings.Contains(p, "unsafe-inline") {
		t.Errorf("CSP %q", p)
	}
	before, _ := h.svc.List(t.Context(), reserve.ListFilter{Tenant: "acme"})
	book := url.Values{"tenant": {"acme"}, "type": {"h100"}, "count": {"1"}, "start": {"now+5h"}, "duration": {"1h"}, "confirm": {"yes"}}
	id := strconv.FormatInt(h.acmeBooking.ID, 10)
	for _, forged := range []string{"", "forged", csrf + "x"} {
		form := url.Values{"csrf": {forged}}
		for k, v := range book {
			form[k] = v
		}
		if code, body, _ := b.post("/book", form); code != 403 || !strings.Contains(body, "not from this session") {
			t.Errorf("book with csrf %q: %d\n%s", forged, code, body)
		}
		if code, _, _ := b.post("/cancel", url.Values{"csrf": {forged}, "tenant": {"acme"}, "id": {id}}); code != 403 {
			t.Errorf("cancel with csrf %q: %d", forged, code)
		}
		if code, _, _ := b.post("/logout", url.Values{"csrf": {forged}}); code != 403 {
			t.Errorf("sign-out with csrf %q: %d", forged, code)
		}
	}
	after, _ := h.svc.List(t.Context(), reserve.ListFilter{Tenant: "acme"})
	if len(after) != len(before) || after[0].State == reserve.StateCancelled {
		t.Errorf("forged forms changed the bookings: %v -> %v", before, after)
	}
	// From another site the form is refused before its CSRF is looked at.
	r, _ := http.NewRequest("POST", h.http.URL+"/book", strings.NewReader(url.Values{"csrf": {csrf}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "cross-site")
	if resp, err := b.c.Do(r); err != nil || resp.StatusCode != 403 {
		t.Errorf("cross-site post: %v %v", resp, err)
	}
	// The session's sign-out ends it: the cookie no longer signs in.
	if code, _, _ := b.post("/logout", url.Values{"csrf": {csrf}}); code != http.StatusSeeOther {
		t.Errorf("sign-out: %d", code)
	}
	if code, body := b.get("/"); code != 200 || !strings.Contains(body, `action="/login"`) {
		t.Errorf("after sign-out: %d\n%s", code, body)
	}
	// The static files the CSP allows are served.
	for _, p := range []string{"/static/portal.js", "/static/portal.css"} {
		if code, body := b.get(p); code != 200 || len(body) < 100 {
			t.Errorf("%s: %d", p, code)
		}
	}
}

// TestPortalBookAndCancel: the calendar links fill the booking form; the
// form shows the price and the terms before booking; the booking is made
// by the person and listed; cancelling shows the fee first; a refusal
// names the next free window.
func TestPortalBookAndCancel(t *testing.T) {
	h := newHarness(t)
	b := newBrowser(h)
	csrf := b.signIn(slurmJWT(t, testJWTKey, "alice", h.now, time.Hour))
	_, body := b.get("/")
	if !strings.Contains(body, `data-key="h100|`) || !strings.Contains(body, `id="show-price"`) || !strings.Contains(body, "h100 at most 3 at once; ending within 365d") {
		t.Fatalf("no calendar or form:\n%s", body)
	}
	href := regexp.MustCompile(`href="(/\?start=[^"]+type=h100)#book"`).FindStringSubmatch(strings.ReplaceAll(body, "&amp;", "&"))
	if href == nil {
		t.Fatalf("no calendar link to the form:\n%s", body)
	}
	_, filled := b.get(href[1])
	start := h.now.Add(48 * time.Hour).Truncate(time.Hour).UTC().Format("2006-01-02T15:04:05Z")
	if !strings.Contains(filled, `name="start" value="`) {
		t.Fatalf("the form is not filled:\n%s", filled)
	}
	form := url.Values{"csrf": {csrf}, "tenant": {"acme"}, "type": {"h100"}, "count": {"2"}, "start": {start}, "duration": {"3h"}, "purpose": {"fine-tune"}}
	code, page, _ := b.post("/book", form)
	if code != 200 || !strings.Contains(page, "12.00 EUR") || !strings.Contains(page, "at least 1d before the start is free") || !strings.Contains(page, `id="confirm"`) {
		t.Fatalf("the confirmation: %d\n%s", code, page)
	}
	if bs, _ := h.svc.List(t.Context(), reserve.ListFilter{Tenant: "acme"}); len(bs) != 1 {
		t.Fatalf("booked before the confirmation: %v", bs)
	}
	form.Set("confirm", "yes")
	code, page, loc := b.post("/book", form)
	if code != http.StatusSeeOther || !strings.Contains(loc, "booked=") {
		t.Fatalf("confirm: %d %s\n%s", code, loc, page)
	}
	bs, _ := h.svc.List(t.Context(), reserve.ListFilter{Tenant: "acme"})
	var made reserve.Booking
	for _, x := range bs {
		if x.Purpose == "fine-tune" {
			made = x
		}
	}
	if made.ID == 0 || made.CreatedBy != "user alice" || made.Count != 2 {
		t.Fatalf("the booking: %+v", made)
	}
	id := strconv.FormatInt(made.ID, 10)
	_, page = b.get(loc)
	if !strings.Contains(page, "Booking "+id+" is made.") || !strings.Contains(page, `<tr data-id="`+id+`">`) {
		t.Errorf("the overview after booking:\n%s", page)
	}
	// Cancelling 48 h ahead is free (24 h notice); the fee is shown first.
	code, page = b.get("/cancel?tenant=acme&id=" + id)
	if code != 200 || !strings.Contains(page, `<b id="fee">none (free: cancelled in time)</b>`) {
		t.Errorf("the cancel page: %d\n%s", code, page)
	}
	if code, _, loc := b.post("/cancel", url.Values{"csrf": {csrf}, "tenant": {"acme"}, "id": {id}}); code != http.StatusSeeOther || !strings.Contains(loc, "cancelled="+id) {
		t.Errorf("cancel: %d %s", code, loc)
	}
	if x, _ := h.svc.Get(t.Context(), made.ID); x.State != reserve.StateCancelled || x.CancelledBy != "user alice" {
		t.Errorf("after cancel: %+v", x)
	}
	// Cancelling the booking that starts in 2 h costs its notice.
	if _, page := b.get("/cancel?tenant=acme&id=" + strconv.FormatInt(h.acmeBooking.ID, 10)); !strings.Contains(page, `<b id="fee">4.00 EUR</b>`) {
		t.Errorf("the fee of a late cancel:\n%s", page)
	}
	// Three h100 while beta holds two of four: refused, with the next window.
	form = url.Values{"csrf": {csrf}, "tenant": {"acme"}, "type": {"h100"}, "count": {"3"}, "start": {"now+70m"}, "duration": {"40m"}, "confirm": {"yes"}}
	if code, page, _ := b.post("/book", form); code != 409 || !strings.Contains(page, "booking refused") || !strings.Contains(page, "next available") || strings.Contains(page, "bsecret") {
		t.Errorf("a refusal: %d\n%s", code, page)
	}
	// A bad field is the CLI's message.
	form.Set("duration", "forever")
	if code, page, _ := b.post("/book", form); code != 400 || !strings.Contains(page, "duration") {
		t.Errorf("a bad duration: %d\n%s", code, page)
	}
}

// TestPortalIsolation: alice (acme) sees nothing of beta in any page,
// form or count; naming beta is 404 or acme's own page; removed from
// acme, alice loses access at once.
func TestPortalIsolation(t *testing.T) {
	h := newHarness(t)
	b := newBrowser(h)
	csrf := b.signIn(slurmJWT(t, testJWTKey, "alice", h.now, time.Hour))
	betaID := strconv.FormatInt(h.betaBooking.ID, 10)
	pages := map[string]int{"/": 200, "/?tenant=beta": 200, "/portal/free?tenant=beta": 200, "/cancel?tenant=beta&id=" + betaID: 404,
		"/cancel?tenant=acme&id=" + betaID: 404}
	for path, want := range pages {
		code, body := b.get(path)
		if code != want {
			t.Errorf("%s: %d; want %d", path, code, want)
		}
		for _, m := range betaMarkers {
			if strings.Contains(strings.ToLower(body), m) {
				t.Errorf("%s shows beta's %q", path, m)
			}
		}
	}
	if code, body, _ := b.post("/cancel", url.Values{"csrf": {csrf}, "tenant": {"beta"}, "id": {betaID}}); code != 404 || strings.Contains(body, "bsecret") {
		t.Errorf("cancel beta's booking: %d\n%s", code, body)
	}
	if x, _ := h.svc.Get(t.Context(), h.betaBooking.ID); x.State == reserve.StateCancelled {
		t.Error("alice cancelled beta's booking")
	}
	// Removed from acme: the next request (the members' read is at most a
	// second old) is refused, the API too.
	h.names.mu.Lock()
	h.names.ts = []tenant.Tenant{{Name: "acme", GPUs: tenant.Quota{"h100": 2}, State: tenant.Active}, h.names.ts[1]}
	h.names.mu.Unlock()
	h.setNow(h.now.Add(2 * time.Second))
	if code, body := b.get("/"); code != 403 || !strings.Contains(body, "not a member") {
		t.Errorf("removed from acme: %d\n%s", code, body)
	}
	if code, _ := h.do("GET", "/api/v1/tenants/acme", slurmJWT(t, testJWTKey, "alice", h.now, time.Hour), ""); code != 403 {
		t.Errorf("removed from acme, the API: %d", code)
	}
}

// TestPortalEscapes: what a tenant writes (a booking's purpose) and what
// a person types (a bad start) is shown escaped, never as markup.
func TestPortalEscapes(t *testing.T) {
	h := newHarness(t)
	b := newBrowser(h)
	csrf := b.signIn(slurmJWT(t, testJWTKey, "alice", h.now, time.Hour))
	evil := `<script>alert(1)</script>"><img src=x onerror=alert(2)>`
	form := url.Values{"csrf": {csrf}, "tenant": {"acme"}, "type": {"h100"}, "count": {"1"}, "start": {"now+30h"}, "duration": {"1h"}, "purpose": {evil}}
	if _, page, _ := b.post("/book", form); strings.Contains(page, "<script>alert") || strings.Contains(page, "<img src=x") {
		t.Errorf("the confirmation shows the purpose unescaped:\n%s", page)
	}
	form.Set("confirm", "yes")
	if code, _, _ := b.post("/book", form); code != http.StatusSeeOther {
		t.Fatalf("book: %d", code)
	}
	_, page := b.get("/")
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "<img src=x") || !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the overview shows the purpose unescaped:\n%s", page)
	}
	form.Set("start", `<b>bold</b>`)
	if _, page, _ := b.post("/book", form); strings.Contains(page, "<b>bold</b>") || !strings.Contains(page, "&lt;b&gt;bold&lt;/b&gt;") {
		t.Errorf("the message shows the input unescaped:\n%s", page)
	}
}

// TestMemorySessions: the in-memory store holds at most Max sessions (the
// oldest goes), and none past its expiry.
func TestMemorySessions(t *testing.T) {
	now := time.Now()
	m := NewMemorySessions(2)
	m.Now = func() time.Time { return now }
	ctx := t.Context()
	for _, id := range []string{"a", "b", "c"} {
		if err := m.Create(ctx, Session{ID: id, Expires: now.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Get(ctx, "a"); err != ErrNoSession {
		t.Errorf("the oldest is kept past Max: %v", err)
	}
	if s, err := m.Get(ctx, "c"); err != nil || s.ID != "c" {
		t.Errorf("c: %+v %v", s, err)
	}
	now = now.Add(2 * time.Minute)
	if _, err := m.Get(ctx, "c"); err != ErrNoSession {
		t.Errorf("expired: %v", err)
	}
}

// TestTenantAdminTokens: a tenant's admin (carol, signed in with a Slurm
// JWT) adds a token of its tenant, named as its maker; the token works at
// once and stops at once when carol revokes it; a member (alice), a
// tenant's token and beta's tokens are out of carol's reach.
func TestTenantAdminTokens(t *testing.T) {
	h := newHarness(t)
	carol := slurmJWT(t, testJWTKey, "carol", h.now, time.Hour)
	code, body := h.do("POST", "/api/v1/tenants/acme/tokens", carol, `{"name":"grafana","scope":"read"}`)
	m := regexp.MustCompile(`"token":"(gpb_[^"]+)"`).FindStringSubmatch(body)
	if code != 201 || m == nil || !strings.Contains(body, `"createdBy":"user carol"`) || !strings.Contains(body, `"tenant":"acme"`) {
		t.Fatalf("add: %d\n%s", code, body)
	}
	if code, _ := h.do("GET", "/api/v1/tenants/acme/quota", m[1], ""); code != 200 {
		t.Errorf("the new token: %d", code)
	}
	if code, body := h.do("GET", "/api/v1/tenants/acme/tokens", carol, ""); code != 200 || !strings.Contains(body, `"name":"grafana"`) || strings.Contains(body, "gpb_") {
		t.Errorf("list: %d\n%s", code, body)
	}
	if code, _ := h.do("DELETE", "/api/v1/tenants/acme/tokens/grafana", carol, ""); code != 200 {
		t.Errorf("delete: %d", code)
	}
	if code, _ := h.do("GET", "/api/v1/tenants/acme/quota", m[1], ""); code != 401 {
		t.Errorf("the revoked token: %d; want 401 at once", code)
	}
	for _, c := range []struct{ tok, method, path string }{
		{slurmJWT(t, testJWTKey, "alice", h.now, time.Hour), "GET", "/api/v1/tenants/acme/tokens"},
		{h.acmeBook, "POST", "/api/v1/tenants/acme/tokens"},
		{carol, "DELETE", "/api/v1/tenants/beta/tokens/ci"},
		{carol, "GET", "/api/v1/tenants/beta/tokens"},
	} {
		if code, body := h.do(c.method, c.path, c.tok, `{"name":"x","scope":"read"}`); code != 403 && code != 404 {
			t.Errorf("%s %s: %d; want 403 or 404\n%s", c.method, c.path, code, body)
		}
	}
	if _, err := h.tokens.Lookup(t.Context(), mustHash(t, h.betaBook)); err != nil {
		t.Errorf("beta's token was touched: %v", err)
	}
}

func mustHash(t *testing.T, raw string) token.Hash {
	t.Helper()
	h, err := token.HashOf(raw)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestSignInRenewsTheSession: signing in again replaces the browser's
// session (a session id planted before sign-in is never the signed-in
// one), and the old id no longer works.
func TestSignInRenewsTheSession(t *testing.T) {
	h := newHarness(t)
	b := newBrowser(h)
	b.signIn(slurmJWT(t, testJWTKey, "alice", h.now, time.Hour))
	u, _ := url.Parse(h.http.URL)
	old := b.c.Jar.Cookies(u)
	b.signIn(h.acmeRead)
	now := b.c.Jar.Cookies(u)
	if len(old) != 1 || len(now) != 1 || old[0].Value == now[0].Value {
		t.Fatalf("cookies %v then %v; want a new session id", old, now)
	}
	if _, err := h.srv.o.Sessions.Get(t.Context(), old[0].Value); err != ErrNoSession {
		t.Errorf("the old session: %v; want it gone", err)
	}
	if _, body := b.get("/"); !strings.Contains(body, "Token ro") {
		t.Errorf("signed in with the token: %.300s", body)
	}
}

// TestPortalTokens: acme's admin (carol) sees acme's tokens, adds one
// (its secret shown once, escaped) and revokes it on the portal; a member
// (alice) sees no token section and may not post to it.
func TestPortalTokens(t *testing.T) {
	h := newHarness(t)
	b := newBrowser(h)
	csrf := b.signIn(slurmJWT(t, testJWTKey, "carol", h.now, time.Hour))
	_, page := b.get("/")
	if !strings.Contains(page, `<h2 id="tokens">API tokens of acme</h2>`) || !strings.Contains(page, `data-token="ci"`) || strings.Contains(page, "gpb_") || strings.Contains(page, "bsecret") {
		t.Fatalf("carol's token section:\n%s", page)
	}
	if code, page, _ := b.post("/tokens", url.Values{"csrf": {csrf}, "tenant": {"acme"}, "name": {"graf"}, "scope": {"admin"}}); code != 400 {
		t.Errorf("an admin-scope token: %d\n%s", code, page)
	}
	code, page, _ := b.post("/tokens", url.Values{"csrf": {csrf}, "tenant": {"acme"}, "name": {"graf"}, "scope": {"read"}, "expires": {"30d"}})
	m := regexp.MustCompile(`<pre class="msg" id="secret">(gpb_[^<]+)</pre>`).FindStringSubmatch(page)
	if code != 201 || m == nil {
		t.Fatalf("add: %d\n%s", code, page)
	}
	if code, _ := h.do("GET", "/api/v1/tenants/acme/quota", m[1], ""); code != 200 {
		t.Errorf("the new token: %d", code)
	}
	if code, page, _ := b.post("/tokens", url.Values{"csrf": {csrf}, "tenant": {"acme"}, "name": {"graf"}, "scope": {"read"}}); code != 400 || !strings.Contains(page, "exists") {
		t.Errorf("the same name again: %d\n%s", code, page)
	}
	if code, _, loc := b.post("/tokens/delete", url.Values{"csrf": {csrf}, "tenant": {"acme"}, "name": {"graf"}}); code != http.StatusSeeOther || !strings.Contains(loc, "revoked=graf") {
		t.Errorf("revoke: %d %s", code, loc)
	}
	if code, _ := h.do("GET", "/api/v1/tenants/acme/quota", m[1], ""); code != 401 {
		t.Errorf("the revoked token: %d", code)
	}
	if code, _, _ := b.post("/tokens/delete", url.Values{"csrf": {"forged"}, "tenant": {"acme"}, "name": {"ci"}}); code != 403 {
		t.Errorf("forged csrf: %d", code)
	}
	a := newBrowser(h)
	acsrf := a.signIn(slurmJWT(t, testJWTKey, "alice", h.now, time.Hour))
	if _, page := a.get("/"); strings.Contains(page, `id="tokens"`) {
		t.Error("a member sees the token section")
	}
	if code, _, _ := a.post("/tokens", url.Values{"csrf": {acsrf}, "tenant": {"acme"}, "name": {"mine"}, "scope": {"book"}}); code != 403 {
		t.Errorf("a member adds a token: %d", code)
	}
	if code, _, _ := a.post("/tokens/delete", url.Values{"csrf": {acsrf}, "tenant": {"acme"}, "name": {"ci"}}); code != 403 {
		t.Errorf("a member revokes a token: %d", code)
	}
}

// TestPersonInTwoTenants: a person in acme and beta acts for the tenant
// a request names (the path, tenant= of the page), the first by name
// otherwise; the page offers both; a tenant the person is not in stays
// 404 on the API.
func TestPersonInTwoTenants(t *testing.T) {
	h := newHarness(t)
	h.names.mu.Lock()
	h.names.ts[1].Users = append(h.names.ts[1].Users, "dave")
	h.names.ts[0].Users = append(h.names.ts[0].Users, "dave")
	h.names.ts = append(h.names.ts, tenant.Tenant{Name: "gamma", Users: []string{"zed"}, State: tenant.Active})
	h.names.mu.Unlock()
	dave := slurmJWT(t, testJWTKey, "dave", h.now, time.Hour)
	for path, want := range map[string]int{"/api/v1/tenants/acme/quota": 200, "/api/v1/tenants/beta/quota": 200, "/api/v1/tenants/gamma/quota": 404,
		"/api/v1/tenants?tenant=beta": 200, "/api/v1/tenants/beta/bookings/" + strconv.FormatInt(h.acmeBooking.ID, 10): 404} {
		if code, body := h.do("GET", path, dave, ""); code != want {
			t.Errorf("%s: %d; want %d\n%s", path, code, want, body)
		}
	}
	if _, body := h.do("GET", "/api/v1/tenants?tenant=beta", dave, ""); !strings.Contains(body, `"beta"`) || strings.Contains(body, `"acme"`) {
		t.Errorf("tenants?tenant=beta: %s", body)
	}
	b := newBrowser(h)
	b.signIn(dave)
	if _, page := b.get("/"); !strings.Contains(page, `<h1 id="tenant">acme</h1>`) || !strings.Contains(page, `<a href="/?tenant=beta">beta</a>`) {
		t.Errorf("dave's first page:\n%s", page)
	}
	if _, page := b.get("/?tenant=beta"); !strings.Contains(page, `<h1 id="tenant">beta</h1>`) || strings.Contains(page, "acme run") {
		t.Errorf("dave's beta page:\n%s", page)
	}
	if _, page := b.get("/?tenant=gamma"); !strings.Contains(page, `<h1 id="tenant">acme</h1>`) || strings.Contains(page, "gamma</h1>") {
		t.Errorf("dave asking for gamma:\n%s", page)
	}
}
