//go:build integration

package main

// The portal in a real browser on the testbed: headless Chromium driven
// through the DevTools protocol (chromedp), as a person uses it. Tenant A's
// member erin signs in with a real `scontrol token`, picks a free window
// on the calendar, sees the price and the cancellation terms, books, sees
// the booking listed, cancels it with the fee shown, and signs out; a
// second browser, signed in as tenant B's bob, sees the pool's free count
// of that window drop without a reload (through the event stream). Screenshots at 390 and 1280 px go
// to $GPUBRIDGE_TEST_ARTIFACTS (default .testbed/artifacts/portal); with
// GPUBRIDGE_DOC_SCREENSHOTS=1 a few are copied to docs/portal-*.png.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/test/bench/synth"
)

// portalBrowser is one headless Chromium (its own cookies) and a tab.
type portalBrowser struct {
	t   *testing.T
	ctx context.Context
}

func newPortalBrowser(t *testing.T) *portalBrowser {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed: run test/install-deps.sh (Debian package chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	// The first call starts the browser, which lives as long as ctx.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return &portalBrowser{t: t, ctx: ctx}
}

// tab bounds one step's wait.
func (b *portalBrowser) tab() (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.ctx, time.Minute)
}

// fail ends the test with the page's HTML.
func (b *portalBrowser) fail(what string, err error) {
	b.t.Helper()
	ctx, cancel := b.tab()
	defer cancel()
	html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html")))
	b.t.Fatalf("%s: %v\npage:\n%.4000s", what, err, html)
}

func (b *portalBrowser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := b.tab()
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.fail(what, err)
	}
}

// get runs one action that reads a value.
func get[T any](b *portalBrowser, what string, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := b.tab()
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.fail(what, err)
	}
	return v
}

func (b *portalBrowser) text(sel string) string {
	b.t.Helper()
	return strings.TrimSpace(get(b, "read "+sel, chromedp.Text(chromedp.CSS(sel))))
}

// shots writes the page at 1280 and 390 px wide as NAME-1280.png and
// NAME-390.png in dir.
func (b *portalBrowser) shots(dir, name string) {
	b.t.Helper()
	for _, w := range []int64{1280, 390} {
		b.do("viewport", chromedp.EmulateViewport(w, 900), chromedp.Sleep(300*time.Millisecond))
		png := get(b, "screenshot "+name, chromedp.FullScreenshot(100))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, w)), png, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
	b.do("viewport back", chromedp.EmulateViewport(1280, 900))
}

// signIn signs in with a real `scontrol token` of user.
func (b *portalBrowser) signIn(h *apiIT, addr, user string) {
	b.t.Helper()
	jwt := strings.TrimPrefix(strings.TrimSpace(h.env.Exec(b.t, "", "scontrol", "token", "username="+user, "lifespan=900")), "SLURM_JWT=")
	b.do("sign in as "+user, chromedp.Navigate("http://"+addr+"/"), chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SetValue(chromedp.CSS("#token"), jwt), chromedp.Click(chromedp.CSS(`form[action="/login"] button`)),
		chromedp.WaitVisible(chromedp.CSS("#calendar")))
}

// portalArtifacts is the folder the browser tests keep their screenshots
// in: $GPUBRIDGE_TEST_ARTIFACTS/portal, else .testbed/artifacts/portal.
func portalArtifacts(t *testing.T) string {
	t.Helper()
	art := os.Getenv("GPUBRIDGE_TEST_ARTIFACTS")
	if art == "" {
		art = filepath.Join("..", "..", ".testbed", "artifacts")
	}
	art = filepath.Join(art, "portal")
	if err := os.MkdirAll(art, 0o755); err != nil {
		t.Fatal(err)
	}
	return art
}

func TestPortalInBrowser(t *testing.T) {
	h := newAPIIT(t)
	art := portalArtifacts(t)
	portalRateCard(t, h)
	erin, bob := newPortalBrowser(t), newPortalBrowser(t)

	// Sign in as a member of tenant A with a real Slurm JWT.
	erin.signIn(h, h.addr, "erin")
	if got := erin.text("#tenant"); got != itA {
		t.Fatalf("signed in to %q; want %s", got, itA)
	}
	erin.shots(art, "overview")

	// Pick a free window a day ahead on the h100 calendar (the fifth
	// six-hour step: past the lead time) and read its free count; bob (of
	// tenant B) looks at the same window.
	cell := `.cal[data-type="h100"] a.cell[data-i="4"]`
	key := get(erin, "the calendar cell", chromedp.AttributeValue(chromedp.CSS(cell), "data-key")).Value
	if !strings.HasPrefix(key, "h100|") {
		t.Fatalf("calendar cell key %q", key)
	}
	bob.signIn(h, h.addr, "bob")
	bobCell := `.cal[data-type="h100"] a.cell[data-key="` + key + `"] .free`
	// Bob's page listens to the event stream (polling is its fallback).
	bob.do("bob's page on the event stream", chromedp.WaitVisible(chromedp.CSS(`#calendar[data-live="events"]`)))
	before := bob.text(bobCell)
	html := get(erin, "erin's page", chromedp.OuterHTML(chromedp.CSS("html")))
	for _, m := range []string{bSecret, itB} {
		if strings.Contains(html, m) {
			t.Errorf("tenant A's page shows %q", m)
		}
	}

	// The cell fills the form; the price and the terms come first.
	erin.do("pick the window", chromedp.Click(chromedp.CSS(cell)), chromedp.WaitVisible(chromedp.CSS("#f-start")))
	start := get(erin, "the form's start", chromedp.Value(chromedp.CSS("#f-start")))
	if start != strings.TrimPrefix(key, "h100|") {
		t.Errorf("the form's start %q; want the cell's %q", start, key)
	}
	erin.do("fill the form", chromedp.SetValue(chromedp.CSS("#f-count"), "1"), chromedp.SetValue(chromedp.CSS("#f-duration"), "2h"),
		chromedp.SetValue(chromedp.CSS("#f-purpose"), "portal browser test"), chromedp.Click(chromedp.CSS("#show-price")),
		chromedp.WaitVisible(chromedp.CSS("#price")))
	if p := erin.text("#price"); !strings.Contains(p, "72.00 EUR") {
		t.Errorf("price %q; want 72.00 EUR (36.00 × 1 GPU × 2 h)", p)
	}
	erin.shots(art, "confirm")
	erin.do("confirm", chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#notice")))
	notice := erin.text("#notice")
	m := regexp.MustCompile(`Booking (\d+) is made`).FindStringSubmatch(notice)
	if m == nil {
		t.Fatalf("notice %q", notice)
	}
	id := m[1]
	row := `#bookings tr[data-id="` + id + `"]`
	erin.do("the booking is listed", chromedp.WaitVisible(chromedp.CSS(row)))
	erin.shots(art, "booked")

	// Bob's calendar shows one GPU less free in that window, without a
	// reload (the event stream sends the counts at once after a booking
	// made through this server).
	deadline := time.Now().Add(30 * time.Second)
	for bob.text(bobCell) == before && time.Now().Before(deadline) {
		time.Sleep(time.Second)
	}
	if after := bob.text(bobCell); after == before {
		t.Errorf("bob's free count stayed %s after erin's booking", after)
	}

	// Cancel with the fee shown first (a day ahead, the default notice of
	// 24 h has passed: the fee is the window).
	erin.do("cancel…", chromedp.Click(chromedp.CSS(row+" a")), chromedp.WaitVisible(chromedp.CSS("#fee")))
	if fee := erin.text("#fee"); fee == "" {
		t.Error("no fee shown")
	}
	erin.shots(art, "cancel")
	erin.do("cancel", chromedp.Click(chromedp.CSS("#confirm-cancel")), chromedp.WaitVisible(chromedp.CSS("#notice")))
	if n := erin.text("#notice"); n != "Booking "+id+" is cancelled." {
		t.Errorf("notice %q", n)
	}
	if code, body := h.do("GET", "/api/v1/tenants/"+itA+"/bookings/"+id, h.tokens["a-read"], ""); code != 200 || !strings.Contains(body, `"state":"cancelled"`) || !strings.Contains(body, `"cancelledBy":"user erin"`) {
		t.Errorf("the booking after the portal's cancel: %d %s", code, body)
	}

	// Sign out: the sign-in form again, and the old session is gone.
	erin.do("sign out", chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)), chromedp.WaitVisible(chromedp.CSS("#token")))
	erin.do("reload", chromedp.Navigate("http://"+h.addr+"/"), chromedp.WaitVisible(chromedp.CSS("#token")))
	erin.shots(art, "signin")

	if os.Getenv("GPUBRIDGE_DOC_SCREENSHOTS") == "1" {
		for _, n := range []string{"overview-1280", "confirm-390", "cancel-390", "booked-1280"} {
			b, err := os.ReadFile(filepath.Join(art, n+".png"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join("..", "..", "docs", "portal-"+n+".png"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// portalRateCard stores a card with a booked rate of 36.00 EUR per
// GPU-hour for h100 in the scratch database.
func portalRateCard(t *testing.T, h *apiIT) {
	t.Helper()
	ctx := context.Background()
	db, err := sqldb.Open(ctx, h.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	card := pricing.Card{Version: pricing.CurrentVersion, Currency: "EUR"}
	for _, r := range []pricing.Rate{{Type: "h100", Tier: meter.Reserved, PerGPUHour: 2_100_000_000}, {Type: "h100", Tier: meter.Booked, PerGPUHour: 36_000_000_000}} {
		r.From, _ = pricing.ParseDate("2020-01-01")
		if card, err = card.WithRate(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := ratecard.NewDB(db).Save(ctx, card, "test", time.Now()); err != nil {
		t.Fatal(err)
	}
}

// TestPortalChargebackInBrowser: erin, signed in with a real `scontrol
// token`, downloads her tenant's FOCUS file of a closed month through the
// usage page's download route in Chromium (a fetch on the page's session,
// as the link does); the bytes are the admin's `export chargeback
// period=P format=focus tenant=T`, and nothing of tenant B is in them.
func TestPortalChargebackInBrowser(t *testing.T) {
	h := newAPIIT(t)
	ctx := context.Background()
	// Jobs of both tenants in May 2019 (a month no other test ingests).
	lo := uint32(synth.TestIDs + 4_100_000)
	rw, tres := h.synthJobs(t, lo)
	var rows []synth.Row
	base := time.Date(2019, 5, 1, 0, 0, 0, 0, time.UTC).Unix()
	for i := range uint32(30) {
		acct := itA
		if i%3 == 0 {
			acct = itB
		}
		s := base + int64(i)*61_000
		rows = append(rows, synth.Row{JobID: lo + i, Account: acct, Partition: "pool", Submit: s - 60, Start: s, End: s + 900 + int64(i)*53,
			State: synth.StateCompleted, TRES: tres.Alloc(4, map[string]int{"h100": 1 + int(i%3)})})
	}
	if err := synth.Insert(ctx, rw, h.env.Cluster, rows); err != nil {
		t.Fatal(err)
	}
	h.ok("add", "rate", "type=h100", "tier=reserved", "price=2.37", "from=2019-01-01", "currency=EUR")
	h.ok("ingest", "from=2019-05-01", "to=2019-06-02")
	h.ok("-i", "close", "period=2019-05")
	want := h.ok("export", "chargeback", "period=2019-05", "format=focus", "tenant="+itA)
	if len(want) < 100 {
		t.Fatalf("the admin's export is %d bytes:\n%s", len(want), want)
	}

	erin := newPortalBrowser(t)
	erin.signIn(h, h.addr, "erin")
	erin.do("the usage page", chromedp.Navigate("http://"+h.addr+"/usage?tenant="+itA), chromedp.WaitVisible(chromedp.CSS("h1")))
	js := `fetch("/usage/chargeback?tenant=` + itA + `&period=2019-05&format=focus", {credentials: "same-origin"})` +
		`.then(r => r.text().then(b => JSON.stringify({status: r.status, disposition: r.headers.get("Content-Disposition"), body: b})))`
	raw := get(erin, "download the FOCUS file", chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	var got struct {
		Status      int
		Disposition string
		Body        string
	}
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if got.Status != 200 || got.Body != want {
		t.Fatalf("the portal's FOCUS download: %d, %d bytes; the admin's export %d bytes (equal: %v)\n%s", got.Status, len(got.Body), len(want), got.Body == want, got.Body)
	}
	if !strings.Contains(got.Disposition, "attachment") {
		t.Errorf("Content-Disposition %q: not a download", got.Disposition)
	}
	for _, m := range []string{itB, bSecret} {
		if strings.Contains(got.Body, m) {
			t.Errorf("tenant A's FOCUS file holds %q", m)
		}
	}
}
