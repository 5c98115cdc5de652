package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/check"
)

// fakeHealth is the health use cases over a fixed pool: acme uses gpu1
// (drained) and gpu2, beta uses gpu3; run 1 is acme's (done), run 2
// beta's. A tenant may trigger 2 checks.
type fakeHealth struct {
	mu   sync.Mutex
	runs map[int64]health.Run
	res  map[int64][]health.StoredResult
	uses map[string][]string
}

func newFakeHealth() *fakeHealth {
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	return &fakeHealth{
		uses: map[string][]string{"acme": {"gpu1", "gpu2"}, "beta": {"gpu3"}},
		runs: map[int64]health.Run{
			1: {ID: 1, Node: "gpu1", Checks: []string{"dcgm-diag"}, Purpose: "triggered", Tenant: "acme", Actor: "alice", State: health.RunDone, RequestedAt: at, FinishedAt: at.Add(time.Minute)},
			2: {ID: 2, Node: "gpu3", Checks: []string{"dcgm-diag"}, Purpose: "triggered", Tenant: "beta", Actor: "bsecretuser", State: health.RunDone, RequestedAt: at, FinishedAt: at.Add(time.Minute)},
		},
		res: map[int64][]health.StoredResult{
			1: {{RunID: 1, Node: "gpu1", Check: "dcgm-diag", Verdict: check.Fail, Reason: "xid 79", Tenant: "acme", At: at.Add(time.Minute)}},
			2: {{RunID: 2, Node: "gpu3", Check: "dcgm-diag", Verdict: check.Pass, Reason: "bsecret-job", Tenant: "beta", At: at.Add(time.Minute)}},
		},
	}
}

func (f *fakeHealth) Nodes(_ context.Context, tenant string) ([]health.NodeView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []health.NodeView
	for _, n := range f.uses[tenant] {
		v := health.NodeView{Node: health.Node{Name: n, State: health.Serving}, Managed: true, SlurmState: "IDLE"}
		if n == "gpu1" {
			v.State, v.Reason, v.Checks, v.SlurmState = health.Drained, "dcgm-diag failed: xid 79", []string{"dcgm-diag"}, "DRAIN"
			r := f.res[1][0]
			v.Last = &r
		}
		if n == "gpu2" { // a check beta triggered once ran here
			r := f.res[2][0]
			v.Last = &r
		}
		out = append(out, v)
	}
	return out, nil
}

func (f *fakeHealth) Check(_ context.Context, actor, tenant, node string) (health.Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	found := false
	for _, n := range f.uses[tenant] {
		found = found || n == node
	}
	if !found {
		return health.Run{}, fmt.Errorf("%w: tenant %s has no job running on %s and no booking of it; a tenant may check only the nodes it uses", health.ErrNotAllowed, tenant, node)
	}
	n := 0
	for _, r := range f.runs {
		if r.Tenant == tenant && r.ID > 2 {
			n++
		}
	}
	if n >= 2 {
		return health.Run{}, health.TenantCapError(tenant, n, 2)
	}
	id := int64(len(f.runs) + 1)
	r := health.Run{ID: id, Node: node, Checks: []string{"dcgm-diag"}, Purpose: "triggered", Tenant: tenant, Actor: actor, State: health.RunSubmitted, JobID: 100 + id, RequestedAt: time.Now().UTC()}
	f.runs[id] = r
	return r, nil
}

// finish ends run id with verdict v.
func (f *fakeHealth) finish(id int64, v check.Verdict) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.runs[id]
	r.State, r.FinishedAt = health.RunDone, time.Now().UTC()
	f.runs[id] = r
	f.res[id] = []health.StoredResult{{RunID: id, Node: r.Node, Check: "dcgm-diag", Verdict: v, Tenant: r.Tenant, At: r.FinishedAt}}
}

func (f *fakeHealth) Run(_ context.Context, id int64) (health.Run, []health.StoredResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.runs[id]
	if !ok {
		return r, nil, health.ErrNotFound
	}
	return r, f.res[id], nil
}

func (f *fakeHealth) Results(_ context.Context, rf health.ResultFilter) ([]health.StoredResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []health.StoredResult
	for _, rs := range f.res {
		for _, r := range rs {
			if rf.Tenant == "" || r.Tenant == rf.Tenant {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

func (f *fakeHealth) History(_ context.Context, tenant string, since time.Time) ([]health.HistoryEntry, error) {
	if tenant != "acme" {
		return nil, nil
	}
	at := time.Date(2026, 11, 30, 10, 1, 0, 0, time.UTC)
	return []health.HistoryEntry{{At: at, Node: "gpu1", What: health.HistState, Event: &health.Event{Node: "gpu1", At: at, From: health.Serving, To: health.Drained, Reason: "dcgm-diag failed: xid 79", RunID: 1}}}, nil
}

// fakeExports writes a tenant's export as a line naming what was asked.
type fakeExports struct{}

func (fakeExports) Chargeback(_ context.Context, tenant string, p meter.Period, f export.Format, w io.Writer) error {
	_, err := fmt.Fprintf(w, "export %s %s %s\n", tenant, p, f)
	return err
}

func (fakeExports) Daily(_ context.Context, tenant string, p meter.Period) ([]DayUse, error) {
	if tenant != "acme" {
		return []DayUse{{Day: p.Start(), Type: "bsecret-type", GPUSeconds: 99}}, nil
	}
	return []DayUse{{Day: p.Start(), Type: "h100", GPUSeconds: 7200}, {Day: p.Start().AddDate(0, 0, 1), Type: "a100", GPUSeconds: 3600}}, nil
}

// TestPortalPages: a member of acme sees its jobs, nodes and usage pages
// with the navigation; nothing of beta appears in them; an admin token is
// sent to the pool overview.
func TestPortalPages(t *testing.T) {
	h := newHarness(t)
	b := newBrowser(h)
	b.signIn(slurmJWT(t, testJWTKey, "alice", h.now, time.Hour))
	for path, want := range map[string][]string{
		"/jobs":  {`aria-current="page">Jobs`, `<h2>Running</h2>`, `<h2>Pending</h2>`},
		"/nodes": {`data-node="gpu1"`, `drained`, `dcgm-diag failed: xid 79`, `requalify runs start on it`, `action="/nodes/check"`, `serving → drained`, `data-node="gpu2"`},
		"/usage": {`GPU-hours per day and GPU type`, `h100`, `a100`, `No month of the last twelve is closed yet.`},
		"/":      {`href="/nodes?tenant=acme"`, `aria-current="page">Overview`},
	} {
		code, body := b.get(path + "?tenant=acme")
		if code != 200 {
			t.Fatalf("%s: %d\n%s", path, code, body)
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("%s lacks %q", path, w)
			}
		}
		for _, m := range append(betaMarkers, "gpu3") {
			if strings.Contains(body, m) {
				t.Errorf("%s shows beta's %q", path, m)
			}
		}
	}
	// Signed out, a page is the sign-in form.
	if code, body := newBrowser(h).get("/nodes"); code != 401 || !strings.Contains(body, `action="/login"`) {
		t.Errorf("signed out /nodes: %d", code)
	}
}

var runRe = regexp.MustCompile(`/nodes/run\?id=(\d+)&tenant=acme`)

// TestPortalRunCheck: "Run check" on a node of the team submits a run
// and goes to its page, which reloads until the verdict is in, then shows
// it; a node of another tenant is refused with the service's words; past
// the hourly limit the check is refused (429); a forged form is refused;
// beta's run is not found.
func TestPortalRunCheck(t *testing.T) {
	h := newHarness(t)
	fh := h.srv.o.Health.(*fakeHealth)
	b := newBrowser(h)
	csrf := b.signIn(slurmJWT(t, testJWTKey, "alice", h.now, time.Hour))
	code, body, loc := b.post("/nodes/check", url.Values{"csrf": {csrf}, "tenant": {"acme"}, "node": {"gpu2"}})
	m := runRe.FindStringSubmatch(loc)
	if code != http.StatusSeeOther || m == nil {
		t.Fatalf("run check: %d %q\n%s", code, loc, body)
	}
	code, body = b.get(loc)
	if code != 200 || !strings.Contains(body, `http-equiv="refresh"`) || !strings.Contains(body, `data-verdict=""`) {
		t.Fatalf("run page while it runs: %d\n%s", code, body)
	}
	var id int64
	fmt.Sscan(m[1], &id)
	fh.finish(id, check.Warn)
	code, body = b.get(loc)
	if code != 200 || strings.Contains(body, `http-equiv="refresh"`) || !strings.Contains(body, `data-verdict="warn"`) {
		t.Fatalf("run page once done: %d\n%s", code, body)
	}
	if code, body, _ := b.post("/nodes/check", url.Values{"csrf": {csrf}, "tenant": {"acme"}, "node": {"gpu3"}}); code != 403 || !strings.Contains(body, "a tenant may check only the nodes it uses") {
		t.Errorf("beta's node: %d\n%s", code, body)
	}
	if code, body, _ := b.post("/nodes/check", url.Values{"csrf": {"forged"}, "tenant": {"acme"}, "node": {"gpu2"}}); code != 403 || !strings.Contains(body, errCSRF.Error()) {
		t.Errorf("forged CSRF: %d\n%s", code, body)
	}
	b.post("/nodes/check", url.Values{"csrf": {csrf}, "tenant": {"acme"}, "node": {"gpu1"}})
	if code, body, _ := b.post("/nodes/check", url.Values{"csrf": {csrf}, "tenant": {"acme"}, "node": {"gpu1"}}); code != 429 || !strings.Contains(body, "tenantChecksPerHour=2") {
		t.Errorf("past the limit: %d\n%s", code, body)
	}
	if code, body := b.get("/nodes/run?tenant=acme&id=2"); code != 404 || strings.Contains(body, "bsecret") {
		t.Errorf("beta's run: %d\n%s", code, body)
	}
}

// TestChargebackDownload: a closed month's export downloads in each
// format with the bytes of the export use case, through the portal and
// the API; an open month is 409; beta's tenant is 404 to acme.
func TestChargebackDownload(t *testing.T) {
	h := newHarness(t)
	closed := meter.PeriodOf(h.now) - 1
	h.usage.mu.Lock()
	h.usage.closed[closed] = true
	h.usage.mu.Unlock()
	b := newBrowser(h)
	b.signIn(slurmJWT(t, testJWTKey, "alice", h.now, time.Hour))
	code, body := b.get("/usage?tenant=acme")
	if code != 200 || !strings.Contains(body, `data-period="`+closed.String()+`"`) || !strings.Contains(body, "format=focus") {
		t.Fatalf("usage page: %d\n%s", code, body)
	}
	for _, f := range []string{"csv", "json", "focus"} {
		want := fmt.Sprintf("export acme %s %s\n", closed, f)
		if code, got := b.get("/usage/chargeback?tenant=acme&period=" + closed.String() + "&format=" + f); code != 200 || got != want {
			t.Errorf("portal %s: %d %q; want %q", f, code, got, want)
		}
		if code, got := h.do("GET", "/api/v1/tenants/acme/chargeback?period="+closed.String()+"&format="+f, h.acmeRead, ""); code != 200 || got != want {
			t.Errorf("API %s: %d %q; want %q", f, code, got, want)
		}
	}
	open := meter.PeriodOf(h.now).String()
	if code, body := b.get("/usage/chargeback?tenant=acme&period=" + open + "&format=csv"); code != 409 || !strings.Contains(body, "is not closed yet") {
		t.Errorf("open month: %d\n%s", code, body)
	}
	if code, _ := h.do("GET", "/api/v1/tenants/beta/chargeback?period="+closed.String(), h.acmeRead, ""); code != 404 {
		t.Errorf("beta's export to acme: %d; want 404", code)
	}
	if code, body := h.do("GET", "/api/v1/tenants/acme/chargeback?period="+closed.String()+"&format=xml", h.acmeRead, ""); code != 400 || !strings.Contains(body, "want csv, json or focus") {
		t.Errorf("format=xml: %d %s", code, body)
	}
}

// TestHealthRoutes: the API's health routes answer the tenant's nodes,
// results, runs and history, trigger with the book scope only, and never
// show beta's run or result.
func TestHealthRoutes(t *testing.T) {
	h := newHarness(t)
	code, body := h.do("GET", "/api/v1/tenants/acme/nodes", h.acmeRead, "")
	if code != 200 || !strings.Contains(body, `"gpu1"`) || !strings.Contains(body, `"drained"`) {
		t.Fatalf("nodes: %d %s", code, body)
	}
	if code, body := h.do("POST", "/api/v1/tenants/acme/checks", h.acmeRead, `{"node":"gpu2"}`); code != 403 {
		t.Errorf("trigger with a read token: %d %s", code, body)
	}
	if code, body := h.do("POST", "/api/v1/tenants/acme/checks", h.acmeBook, `{}`); code != 400 || !strings.Contains(body, "node: missing") {
		t.Errorf("trigger without node: %d %s", code, body)
	}
	code, body = h.do("POST", "/api/v1/tenants/acme/checks", h.acmeBook, `{"node":"gpu2"}`)
	if code != 202 || !strings.Contains(body, `"state":"submitted"`) {
		t.Fatalf("trigger: %d %s", code, body)
	}
	if code, body := h.do("GET", "/api/v1/tenants/acme/checks/runs/1", h.acmeRead, ""); code != 200 || !strings.Contains(body, `"done":true`) || !strings.Contains(body, "xid 79") {
		t.Errorf("run 1: %d %s", code, body)
	}
	for _, path := range []string{"/api/v1/tenants/acme/nodes", "/api/v1/tenants/acme/checks", "/api/v1/tenants/acme/health/history", "/api/v1/tenants/acme/checks/runs/2"} {
		_, body := h.do("GET", path, h.acmeRead, "")
		for _, m := range betaMarkers {
			if strings.Contains(body, m) {
				t.Errorf("%s shows beta's %q: %s", path, m, body)
			}
		}
	}
	if code, _ := h.do("GET", "/api/v1/tenants/acme/checks/runs/2", h.acmeRead, ""); code != 404 {
		t.Errorf("beta's run: %d; want 404", code)
	}
	if code, _ := h.do("GET", "/api/v1/tenants/acme/checks/runs/2", h.admin, ""); code != 200 {
		t.Errorf("beta's run to an admin: %d; want 200", code)
	}
	if code, body := h.do("GET", "/api/v1/tenants/acme/checks?since=x", h.acmeRead, ""); code != 400 || !strings.Contains(body, "since=x") {
		t.Errorf("since=x: %d %s", code, body)
	}
}

// TestPortalModify: extending a booking shows the new price beside the
// current one before anything changes; confirming runs modify booking
// with the person as actor; beta's booking is not found.
func TestPortalModify(t *testing.T) {
	h := newHarness(t)
	b := newBrowser(h)
	csrf := b.signIn(slurmJWT(t, testJWTKey, "alice", h.now, time.Hour))
	id := fmt.Sprint(h.acmeBooking.ID)
	if _, page := b.get("/?tenant=acme"); !strings.Contains(page, `href="/modify?tenant=acme&amp;id=`+id+`"`) {
		t.Fatalf("no modify link:\n%s", page)
	}
	code, page := b.get("/modify?tenant=acme&id=" + id)
	if code != 200 || !strings.Contains(page, `<b id="price-before">4.00 EUR</b>`) || !strings.Contains(page, `id="show-change"`) {
		t.Fatalf("the modify form: %d\n%s", code, page)
	}
	end := h.acmeBooking.End.Add(2 * time.Hour).UTC().Format("2006-01-02T15:04:05Z")
	form := url.Values{"csrf": {csrf}, "tenant": {"acme"}, "id": {id}, "end": {end}, "count": {"1"}, "purpose": {"acme run"}}
	code, page, _ = b.post("/modify", form)
	if code != 200 || !strings.Contains(page, `<b>8.00 EUR</b> (was 4.00 EUR`) || !strings.Contains(page, `id="confirm-modify"`) {
		t.Fatalf("the preview: %d\n%s", code, page)
	}
	if x, _ := h.svc.Get(t.Context(), h.acmeBooking.ID); !x.End.Equal(h.acmeBooking.End) {
		t.Fatalf("changed before the confirmation: %+v", x)
	}
	form.Set("confirm", "yes")
	if code, page, loc := b.post("/modify", form); code != http.StatusSeeOther || !strings.Contains(loc, "modified="+id) {
		t.Fatalf("confirm: %d %s\n%s", code, loc, page)
	}
	if x, _ := h.svc.Get(t.Context(), h.acmeBooking.ID); !x.End.Equal(h.acmeBooking.End.Add(2*time.Hour)) || x.Count != 1 {
		t.Errorf("after the change: %+v", x)
	}
	if code, page := b.get("/modify?tenant=acme&id=" + fmt.Sprint(h.betaBooking.ID)); code != 404 || strings.Contains(page, "bsecret") {
		t.Errorf("beta's booking: %d\n%s", code, page)
	}
	if code, _, _ := b.post("/modify", url.Values{"csrf": {"x"}, "tenant": {"acme"}, "id": {id}, "end": {end}, "confirm": {"yes"}}); code != 403 {
		t.Errorf("forged CSRF: %d", code)
	}
}

// TestAdminPool: an admin token's overview adds the pool calendar, the
// bookings at risk and the nodes held (every tenant's: the admin's view).
func TestAdminPool(t *testing.T) {
	h := newHarness(t)
	fh := h.srv.o.Health.(*fakeHealth)
	fh.uses[""] = []string{"gpu1", "gpu2", "gpu3"}
	b := newBrowser(h)
	b.signIn(h.admin)
	code, body := b.get("/")
	for _, w := range []string{"<h2>Bookings at risk</h2>", `data-node="gpu1"`, "requalify runs start on it", "Pool calendar", `table class="cal" data-type="h100"`} {
		if code != 200 || !strings.Contains(body, w) {
			t.Errorf("admin overview (%d) lacks %q", code, w)
		}
	}
	if strings.Contains(body, `data-node="gpu2"`) {
		t.Errorf("a serving node is listed as held")
	}
}
