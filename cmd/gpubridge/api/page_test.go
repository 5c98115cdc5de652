package api

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chromium runs headless Chromium (Debian's chromium, installed by
// test/install-deps.sh) on url: the DOM after scripts (there are none)
// and a screenshot.
func chromium(t *testing.T, url string) (string, image.Image) {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed: run test/install-deps.sh (Debian package chromium)")
	}
	run := func(extra ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			// --timeout, not --virtual-time-budget: the page's event stream stays
			// open, and virtual time does not pass while a request is open.
			"--user-data-dir=" + t.TempDir(), "--window-size=1000,1400", "--timeout=8000"}, extra...)
		cmd := exec.CommandContext(ctx, bin, append(args, url)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %v: %v\n%s", extra, err, errb.String())
		}
		return out.Bytes()
	}
	dom := string(run("--dump-dom"))
	shot := filepath.Join(t.TempDir(), "page.png")
	run("--screenshot=" + shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if dir := os.Getenv("GPUBRIDGE_SCREENSHOT_DIR"); dir != "" {
		b, _ := os.ReadFile(shot)
		_ = os.WriteFile(filepath.Join(dir, filepath.Base(t.Name())+".png"), b, 0o644)
	}
	return dom, img
}

// hasColor reports whether img holds a pixel close to r, g, b.
func hasColor(img image.Image, r, g, b uint8) int {
	n := 0
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y += 2 {
		for x := bd.Min.X; x < bd.Max.X; x += 2 {
			pr, pg, pb, _ := img.At(x, y).RGBA()
			if near(pr>>8, r) && near(pg>>8, g) && near(pb>>8, b) {
				n++
			}
		}
	}
	return n
}

func near(a uint32, b uint8) bool { return a+6 >= uint32(b) && a <= uint32(b)+6 }

// loginURL serves, on an origin of its own that also serves h's API, a
// page that posts tok to /login at once (what a person does with the
// form), and returns its address: the browser then holds the cookie and
// shows the page.
func loginURL(t *testing.T, h *harness, tok string) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /test-login", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<!DOCTYPE html><html><body><form method="post" action="/login"><input type="hidden" name="token" value="`+tok+
			`"></form><script>document.forms[0].submit()</script></body></html>`)
	})
	mux.Handle("/", h.http.Config.Handler)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/test-login"
}

// TestStatusPageInChromium: a tenant's token posted to /login becomes a
// cookie; the page shows the tenant's name, its quota numbers, its usage
// chart and its booking on the timeline, and nothing of the other tenant.
func TestStatusPageInChromium(t *testing.T) {
	h := newHarness(t)
	dom, img := chromium(t, loginURL(t, h, h.acmeRead))
	for _, want := range []string{
		`<h1 id="tenant">acme</h1>`,
		`<div class="gauge" data-type="h100">`,
		`<span class="inquota">2</span> of <span class="quota">2</span> in use`,
		`<span class="inquota">0</span> of <span class="quota">2</span> in use`, // 1g.10gb
		`5.00 EUR`,
		`2.000000 GPU-h`,
		`<div class="lane" data-type="h100">`,
		`booking 1: h100:1`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page misses %q", want)
		}
	}
	for _, m := range betaMarkers {
		if strings.Contains(strings.ToLower(dom), m) {
			t.Errorf("the page shows beta's %q", m)
		}
	}
	if strings.Contains(dom, h.acmeRead) {
		t.Error("the page shows the token")
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}
	if b := img.Bounds(); b.Dx() != 1000 || b.Dy() != 1400 {
		t.Errorf("screenshot %v; want 1000x1400", b)
	}
	// The gauge and the chart are drawn: the blue of their bars is on the
	// screenshot.
	if n := hasColor(img, 0x3f, 0x6f, 0xd8); n < 100 {
		t.Errorf("the screenshot has %d blue pixels of the gauges and chart; want the bars drawn", n)
	}
}

// TestStatusPageAdminInChromium: an admin token sees the whole pool and
// every tenant.
func TestStatusPageAdminInChromium(t *testing.T) {
	h := newHarness(t)
	dom, _ := chromium(t, loginURL(t, h, h.admin))
	for _, want := range []string{"<h1>Pool</h1>", "<td>h100</td>", "<td>acme</td>", "<td>beta</td>", "h100:2"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the admin page misses %q\n%s", want, dom)
		}
	}
}

// TestStatusPageLogin: without a cookie the login form; a bad token is
// refused there; the form's POST sets the cookie; logout clears it.
func TestStatusPageLogin(t *testing.T) {
	h := newHarness(t)
	code, body := h.do("GET", "/", "", "")
	if code != 200 || !strings.Contains(body, `<form method="post" action="/login">`) {
		t.Fatalf("GET / without a cookie: %d\n%s", code, body)
	}
	// A token in the address is never taken, valid or not.
	for _, tok := range []string{"gpb_nope", h.acmeRead} {
		if code, body := h.do("GET", "/?token="+tok, "", ""); code != 400 || !strings.Contains(body, "not taken in the address") {
			t.Errorf("?token=%s: %d\n%s", tok[:6], code, body)
		}
	}
	c := h.http.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.PostForm(h.http.URL+"/login", url.Values{"token": {h.acmeBook}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == cookieName {
			cookie = ck
		}
	}
	if resp.StatusCode != http.StatusSeeOther || cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("login: %d %+v", resp.StatusCode, cookie)
	}
	req, _ := http.NewRequest("GET", h.http.URL+"/", nil)
	req.AddCookie(cookie)
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `<h1 id="tenant">acme</h1>`) {
		t.Errorf("page with the cookie: %d\n%s", resp.StatusCode, b)
	}
	// The JSON API never takes the cookie (no cross-site change with it).
	req, _ = http.NewRequest("POST", h.http.URL+"/api/v1/tenants/acme/bookings", strings.NewReader(`{"gpus":"h100:1","start":"now+1h","duration":"1h"}`))
	req.AddCookie(cookie)
	if resp, err := c.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("API with the cookie only: %v %v", resp, err)
	}
	resp, err = c.PostForm(h.http.URL+"/logout", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(resp.Cookies()) != 1 || resp.Cookies()[0].MaxAge >= 0 {
		t.Errorf("logout did not clear the cookie: %+v", resp.Cookies())
	}
}
