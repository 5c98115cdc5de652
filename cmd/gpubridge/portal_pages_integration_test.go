//go:build integration

package main

// The portal's pages in a real browser on the testbed, checked by axe-core
// (npm, pinned and verified by test/portal/axe.sh, injected into each page
// through the DevTools protocol): sign-in, overview, the booking's price,
// jobs, nodes, usage, modify (form and preview), cancel and the admin's
// pool. A serious or critical violation fails the test. Each page is kept
// as a screenshot at 1280 and 390 px under the artifacts
// ($GPUBRIDGE_TEST_ARTIFACTS, default .testbed/artifacts/portal); with
// GPUBRIDGE_DOC_SCREENSHOTS=1 the docs' pictures of these pages are
// refreshed.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// axeViolation is what the test keeps of an axe-core violation.
type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// axeSource fetches the pinned axe-core (test/portal/axe.sh) and reads it.
func axeSource(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(filepath.Join("..", "..", "test", "portal", "axe.sh")).Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("test/portal/axe.sh: %v\n%s", err, stderr)
	}
	b, err := os.ReadFile(strings.TrimSpace(string(out)))
	if err != nil || len(b) < 100_000 {
		t.Fatalf("axe-core: %v (%d bytes)", err, len(b))
	}
	return string(b)
}

// axe injects axe-core into the page and fails the test on any serious
// or critical violation; it then keeps the page's screenshots.
func (b *portalBrowser) axe(src, art, name string) {
	b.t.Helper()
	run := src + `
;axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
  .filter(v => v.impact === "serious" || v.impact === "critical")
  .map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map(n => n.target.join(" "))})))`
	vs := get(b, "axe on "+name, chromedp.Evaluate[[]axeViolation](run, chromedp.EvalAwaitPromise))
	for _, v := range vs {
		j, _ := json.Marshal(v)
		b.t.Errorf("axe-core on %s: %s violation %s (%s): %s", name, v.Impact, v.ID, v.Help, j)
	}
	b.t.Logf("axe-core on %s: %d serious or critical violations", name, len(vs))
	b.shots(art, name)
}

func TestPortalPagesAccessible(t *testing.T) {
	h := newAPIIT(t)
	src := axeSource(t)
	art := portalArtifacts(t)
	portalRateCard(t, h)
	base := "http://" + h.addr
	erin := newPortalBrowser(t)
	erin.do("the sign-in page", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#token")))
	erin.axe(src, art, "signin")
	erin.signIn(h, h.addr, "erin")
	erin.axe(src, art, "overview")

	for _, p := range []struct{ path, wait, name string }{
		{"/jobs", "#tenant", "jobs"},
		{"/nodes", "#tenant", "nodes"},
		{"/usage", "#tenant", "usage"},
	} {
		erin.do(p.name, chromedp.Navigate(base+p.path+"?tenant="+itA), chromedp.WaitVisible(chromedp.CSS(p.wait)))
		if got := erin.text(`nav.portal a[aria-current="page"]`); !strings.EqualFold(got, p.name) {
			t.Errorf("%s: the navigation marks %q", p.path, got)
		}
		erin.axe(src, art, p.name)
	}

	// The booking form's price, before booking.
	cell := `.cal[data-type="h100"] a.cell[data-i="4"]`
	erin.do("pick a window", chromedp.Navigate(base+"/?tenant="+itA), chromedp.WaitVisible(chromedp.CSS(cell)), chromedp.Click(chromedp.CSS(cell)),
		chromedp.WaitVisible(chromedp.CSS("#f-start")), chromedp.SetValue(chromedp.CSS("#f-duration"), "2h"),
		chromedp.Click(chromedp.CSS("#show-price")), chromedp.WaitVisible(chromedp.CSS("#price")))
	erin.axe(src, art, "confirm")

	// A booking a day ahead: modify (form, then the new price first) and
	// cancel (the fee first).
	code, body := h.do("POST", "/api/v1/tenants/"+itA+"/bookings", h.tokens["a-book"], `{"gpus":"h100:1","start":"now+26h","duration":"2h","purpose":"axe"}`)
	var bk struct{ ID int64 }
	if err := json.Unmarshal([]byte(body), &bk); code != 201 || err != nil || bk.ID == 0 {
		t.Fatalf("a booking: %d %v %s", code, err, body)
	}
	id := strconv.FormatInt(bk.ID, 10)
	erin.do("modify", chromedp.Navigate(base+"/modify?tenant="+itA+"&id="+id), chromedp.WaitVisible(chromedp.CSS("#m-end")))
	erin.axe(src, art, "modify")
	erin.do("extend by an hour", chromedp.SetValue(chromedp.CSS("#m-end"), "now+29h"), chromedp.Click(chromedp.CSS("#show-change")),
		chromedp.WaitVisible(chromedp.CSS("#confirm-modify")))
	if p := erin.text("#price"); !strings.Contains(p, "was 72.00 EUR") {
		t.Errorf("the modify preview's price %q; want it beside the current 72.00 EUR", p)
	}
	erin.axe(src, art, "modify-preview")
	erin.do("cancel…", chromedp.Navigate(base+"/cancel?tenant="+itA+"&id="+id), chromedp.WaitVisible(chromedp.CSS("#fee")))
	erin.axe(src, art, "cancel")

	// The admin's pool.
	admin := newPortalBrowser(t)
	admin.do("sign in as admin", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SetValue(chromedp.CSS("#token"), h.tokens["admin"]), chromedp.Click(chromedp.CSS(`form[action="/login"] button`)),
		chromedp.WaitVisible(chromedp.CSS("#at-risk, h2")))
	admin.axe(src, art, "admin")

	if os.Getenv("GPUBRIDGE_DOC_SCREENSHOTS") == "1" {
		for _, n := range []string{"jobs-1280", "nodes-1280", "usage-1280", "modify-preview-390", "admin-1280"} {
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
