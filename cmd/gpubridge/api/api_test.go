package api

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/tenant"
)

func TestAuthentication(t *testing.T) {
	h := newHarness(t)
	cases := map[string]struct {
		tok  string
		want int
	}{
		"none":            {"", http.StatusUnauthorized},
		"malformed":       {"not-a-token", http.StatusUnauthorized},
		"unknown":         {"gpb_" + strings.Repeat("A", 43), http.StatusUnauthorized},
		"revoked":         {h.revoked, http.StatusUnauthorized},
		"tenant read":     {h.acmeRead, http.StatusOK},
		"tenant book":     {h.acmeBook, http.StatusOK},
		"admin":           {h.admin, http.StatusOK},
		"other tenant":    {h.betaBook, http.StatusNotFound},
		"jwt is no token": {"eyJhbGciOiJIUzI1NiJ9.eyJzdW4iOiJyb290In0.x", http.StatusUnauthorized},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			code, body := h.do("GET", "/api/v1/tenants/acme", c.tok, "")
			if code != c.want {
				t.Fatalf("status %d; want %d\n%s", code, c.want, body)
			}
		})
	}
	// Expired: one minute later the token ci/old no longer works.
	h.setNow(h.now.Add(2 * time.Minute))
	if code, _ := h.do("GET", "/api/v1/tenants/acme", h.expired, ""); code != http.StatusUnauthorized {
		t.Errorf("expired token: %d; want 401", code)
	}
	// A scheme other than Bearer is refused too.
	r, _ := http.NewRequest("GET", h.http.URL+"/api/v1/tenants/acme", nil)
	r.SetBasicAuth("acme", h.acmeRead)
	if resp, err := h.http.Client().Do(r); err != nil || resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("basic auth: %v %v", resp, err)
	}
}

func TestScopeIs403OnOwnObjectsOnly(t *testing.T) {
	h := newHarness(t)
	own := fmt.Sprint(h.acmeBooking.ID)
	other := fmt.Sprint(h.betaBooking.ID)
	cases := map[string]struct {
		method, path, tok, body string
		want                    int
	}{
		"read token creates":          {"POST", "/api/v1/tenants/acme/bookings", h.acmeRead, `{"gpus":"h100:1","start":"now+1h","duration":"1h"}`, 403},
		"read token modifies own":     {"PATCH", "/api/v1/tenants/acme/bookings/" + own, h.acmeRead, `{"duration":"1h"}`, 403},
		"read token cancels own":      {"DELETE", "/api/v1/tenants/acme/bookings/" + own, h.acmeRead, "", 403},
		"read token modifies beta's":  {"PATCH", "/api/v1/tenants/acme/bookings/" + other, h.acmeRead, `{"duration":"1h"}`, 404},
		"read token cancels beta's":   {"DELETE", "/api/v1/tenants/acme/bookings/" + other, h.acmeRead, "", 404},
		"read token creates for beta": {"POST", "/api/v1/tenants/beta/bookings", h.acmeRead, `{"gpus":"h100:1","start":"now+1h","duration":"1h"}`, 404},
		"read token reads own":        {"GET", "/api/v1/tenants/acme/bookings/" + own, h.acmeRead, "", 200},
		"tenant token on the pool":    {"GET", "/api/v1/pool", h.acmeBook, "", 403},
		"admin on the pool":           {"GET", "/api/v1/pool", h.admin, "", 200},
		"admin reads beta":            {"GET", "/api/v1/tenants/beta/bookings/" + other, h.admin, "", 200},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if code, body := h.do(c.method, c.path, c.tok, c.body); code != c.want {
				t.Errorf("%s %s: %d; want %d\n%s", c.method, c.path, code, c.want, body)
			}
		})
	}
}

// isolationPaths are requests acme's token must get nothing of beta from.
func isolationPaths(h *harness) []struct{ method, path, body string } {
	b := fmt.Sprint(h.betaBooking.ID)
	a := fmt.Sprint(h.acmeBooking.ID)
	return []struct{ method, path, body string }{
		{"GET", "/api/v1/tenants/beta", ""},
		{"GET", "/api/v1/tenants/beta/quota", ""},
		{"GET", "/api/v1/tenants/beta/usage", ""},
		{"GET", "/api/v1/tenants/beta/burst", ""},
		{"GET", "/api/v1/tenants/beta/jobs/pending", ""},
		{"GET", "/api/v1/tenants/beta/bookings", ""},
		{"POST", "/api/v1/tenants/beta/bookings", `{"gpus":"h100:1","start":"now+1h","duration":"1h"}`},
		{"GET", "/api/v1/tenants/beta/bookings/" + b, ""},
		{"PATCH", "/api/v1/tenants/beta/bookings/" + b, `{"duration":"1h"}`},
		{"DELETE", "/api/v1/tenants/beta/bookings/" + b, ""},
		{"GET", "/api/v1/tenants/beta/availability", ""},
		{"GET", "/api/v1/tenants/beta/slots?type=h100&count=1&duration=1h", ""},
		{"GET", "/api/v1/tenants/acme/bookings/" + b, ""},
		{"PATCH", "/api/v1/tenants/acme/bookings/" + b, `{"duration":"1h"}`},
		{"DELETE", "/api/v1/tenants/acme/bookings/" + b, ""},
		{"GET", "/api/v1/tenants/acme?tenant=beta", ""},
		{"GET", "/api/v1/tenants/acme/usage?tenant=beta", ""},
		{"GET", "/api/v1/tenants/acme/usage?account=beta", ""},
		{"GET", "/api/v1/tenants/acme/bookings?tenant=beta", ""},
		{"GET", "/api/v1/tenants/acme/bookings/" + a + "?tenant=beta", ""},
		{"GET", "/api/v1/tenants?tenant=beta", ""},
		{"GET", "/api/v1/tenants/nosuch", ""},
	}
}

func TestIsolation(t *testing.T) {
	h := newHarness(t)
	_, notFound := h.do("GET", "/api/v1/tenants/nosuch", h.acmeBook, "")
	for _, tok := range []string{h.acmeRead, h.acmeBook} {
		for _, p := range isolationPaths(h) {
			code, body := h.do(p.method, p.path, tok, p.body)
			if code != http.StatusNotFound || body != notFound {
				t.Errorf("%s %s: %d %s; want 404 %s", p.method, p.path, code, body, notFound)
			}
		}
	}
	// Lists hold acme only; beta's booking is untouched.
	_, list := h.do("GET", "/api/v1/tenants", h.acmeRead, "")
	var tl struct{ Tenants []TenantView }
	if err := json.Unmarshal([]byte(list), &tl); err != nil || len(tl.Tenants) != 1 || tl.Tenants[0].Name != "acme" {
		t.Errorf("tenants list for acme: %s", list)
	}
	if b, err := h.svc.Get(context.Background(), h.betaBooking.ID); err != nil || b.State == reserve.StateCancelled || b.End != h.betaBooking.End {
		t.Errorf("beta's booking changed: %+v %v", b, err)
	}
	// Every answer to acme is free of beta's markers.
	for _, p := range h.srv.Routes() {
		method, path, _ := strings.Cut(p, " ")
		path = strings.NewReplacer("{tenant}", "acme", "{id}", fmt.Sprint(h.acmeBooking.ID)).Replace(path)
		if method != "GET" {
			continue
		}
		_, body := h.do(method, path+"?type=h100&count=1&duration=1h", h.acmeBook, "")
		assertNoLeak(t, method+" "+path, body)
	}
}

func assertNoLeak(t *testing.T, what, body string) {
	t.Helper()
	for _, m := range betaMarkers {
		if m == "beta" && strings.Contains(strings.ToLower(what), "beta") {
			continue // an input echoed in a problem's message is no leak
		}
		if strings.Contains(strings.ToLower(body), m) {
			t.Errorf("%s: the answer holds beta's %q:\n%s", what, m, body)
		}
	}
}

// TestRandomizedRequestsLeakNothing sends 10,000 random requests (paths
// of every route and some that are none, both tenants' names and ids,
// random ids, query strings with tenant=, account= and junk) with acme's
// tokens and checks that no answer holds any of beta's data.
func TestRandomizedRequestsLeakNothing(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	ids := []string{fmt.Sprint(h.acmeBooking.ID), fmt.Sprint(h.betaBooking.ID), "0", "-1", "999", "abc", "1e3", fmt.Sprint(rng.IntN(1 << 20))}
	routes := h.srv.Routes()
	codes := map[int]int{}
	for i := range 10_000 {
		method, path, _ := strings.Cut(routes[rng.IntN(len(routes))], " ")
		if rng.IntN(10) == 0 {
			method = pick("GET", "POST", "PATCH", "DELETE", "PUT")
		}
		path = strings.ReplaceAll(path, "{tenant}", pick("acme", "beta", "BETA", "acme/../beta", "beta%2f", "nosuch", "acme"))
		path = strings.ReplaceAll(path, "{id}", pick(ids...))
		if rng.IntN(8) == 0 {
			path += pick("/", "/x", "/../../tenants/beta", "/bookings/"+ids[1])
		}
		var qs []string
		for range rng.IntN(4) {
			qs = append(qs, pick("tenant", "account", "period", "type", "state", "from", "to", "count", "duration", "limit", "x")+"="+
				pick("beta", "acme", "h100", "2026-11", "now", "now+1d", "1", "1h", "scheduled", "%00", ""))
		}
		if len(qs) > 0 {
			path += "?" + strings.Join(qs, "&")
		}
		body := ""
		if method == "POST" || method == "PATCH" {
			body = pick(`{"gpus":"h100:1","start":"now+1h","duration":"1h","purpose":"acme rnd"}`, `{"duration":"2h"}`, `{"tenant":"beta"}`, `[]`, `{"gpus":1}`, "")
		}
		code, answer := h.do(method, path, pick(h.acmeRead, h.acmeBook), body)
		codes[code]++
		assertNoLeak(t, fmt.Sprintf("request %d: %s %s %s", i, method, path, body), answer)
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("status codes: %v", codes)
	if codes[200] == 0 || codes[404] == 0 {
		t.Errorf("the random requests did not reach both answers: %v", codes)
	}
}

func TestRateLimitPerSource(t *testing.T) {
	h := newHarness(t)
	// A burst of 5 failures is allowed, the next guess is refused; a
	// valid token still works.
	guess := "gpb_" + strings.Repeat("B", 43)
	for i := range 5 {
		if code, _ := h.do("GET", "/api/v1/tenants/acme", guess, ""); code != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d; want 401", i+1, code)
		}
	}
	if code, _ := h.do("GET", "/api/v1/tenants/acme", guess, ""); code != http.StatusTooManyRequests {
		t.Fatalf("after 5 failures: %d; want 429", code)
	}
	if code, _ := h.do("GET", "/api/v1/tenants/acme", h.acmeRead, ""); code != http.StatusOK {
		t.Fatalf("a valid token after 5 failures: %d; want 200", code)
	}
	// 6 per minute: ten seconds later one more attempt is allowed.
	h.setNow(h.now.Add(11 * time.Second))
	if code, _ := h.do("GET", "/api/v1/tenants/acme", guess, ""); code != http.StatusUnauthorized {
		t.Fatalf("after the refill: %d; want 401", code)
	}
	// A missing token is counted but is no guess: it never blocks.
	for range 10 {
		h.do("GET", "/api/v1/tenants/acme", "", "")
	}
	if code, _ := h.do("GET", "/api/v1/tenants/acme", h.acmeRead, ""); code != http.StatusOK {
		t.Errorf("after missing tokens: %d; want 200", code)
	}
	if v := counter(t, h, "gpubridge_api_auth_failures_total", "unknown"); v != 7 {
		t.Errorf("unknown-token failures counted %v; want 7", v)
	}
	if v := counter(t, h, "gpubridge_api_rate_limited_total", ""); v != 1 {
		t.Errorf("rate-limited counted %v; want 1", v)
	}
}

func counter(t *testing.T, h *harness, name, label string) float64 {
	t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label == "" || len(m.GetLabel()) > 0 && m.GetLabel()[0].GetValue() == label {
				return m.GetCounter().GetValue()
			}
		}
	}
	return -1
}

func TestBookThroughTheAPI(t *testing.T) {
	h := newHarness(t)
	start := h.now.Add(6 * time.Hour).Format(time.RFC3339)
	code, body := h.do("POST", "/api/v1/tenants/acme/bookings", h.acmeBook, `{"gpus":"h100:2","start":"`+start+`","duration":"2h","purpose":"api test"}`)
	if code != http.StatusCreated {
		t.Fatalf("add: %d\n%s", code, body)
	}
	var b bookingView
	if err := json.Unmarshal([]byte(body), &b); err != nil || b.Tenant != "acme" || b.Count != 2 || b.CreatedBy != "api-token acme/ci" || b.ReservationName != fmt.Sprintf("gpubridge-%d", b.ID) {
		t.Fatalf("added booking: %v %+v", err, b)
	}
	// In the list and in the availability.
	_, list := h.do("GET", "/api/v1/tenants/acme/bookings", h.acmeRead, "")
	if !strings.Contains(list, `"purpose":"api test"`) {
		t.Errorf("list misses the new booking:\n%s", list)
	}
	_, av := h.do("GET", "/api/v1/tenants/acme/availability?type=h100&from="+start+"&to="+h.now.Add(7*time.Hour).Format(time.RFC3339)+"&step=1h", h.acmeRead, "")
	var a reserve.Availability
	if err := json.Unmarshal([]byte(av), &a); err != nil || len(a.Resources) != 1 || a.Resources[0].Buckets[0].Committed != 2 {
		t.Errorf("availability: %v\n%s", err, av)
	}
	// Over the policy (3 h100 at once): refused with the service's message,
	// which is what the CLI prints.
	over := reserve.Request{Tenant: "acme", Kind: reserve.KindGPU, GPUType: "h100", Count: 2, Start: h.now.Add(6 * time.Hour), End: h.now.Add(8 * time.Hour)}
	_, want := h.svc.Check(context.Background(), "cli", over)
	if want == nil {
		t.Fatal("the service admits the over-policy booking")
	}
	code, body = h.do("POST", "/api/v1/tenants/acme/bookings", h.acmeBook, `{"gpus":"h100:2","start":"`+start+`","end":"`+h.now.Add(8*time.Hour).Format(time.RFC3339)+`"}`)
	var eb errorBody
	if err := json.Unmarshal([]byte(body), &eb); err != nil || code != http.StatusBadRequest || eb.Error != want.Error() {
		t.Errorf("over policy: %d %v\n%s\nwant the message:\n%s", code, err, body, want.Error())
	}
	// Modify and cancel, as the token.
	code, body = h.do("PATCH", fmt.Sprintf("/api/v1/tenants/acme/bookings/%d", b.ID), h.acmeBook, `{"duration":"1h"}`)
	if code != http.StatusOK || !strings.Contains(body, `"end":"`+h.now.Add(7*time.Hour).Format(time.RFC3339)) {
		t.Errorf("modify: %d\n%s", code, body)
	}
	if code, body := h.do("DELETE", fmt.Sprintf("/api/v1/tenants/acme/bookings/%d", b.ID), h.acmeBook, ""); code != http.StatusOK || !strings.Contains(body, `"state":"cancelled"`) {
		t.Errorf("cancel: %d\n%s", code, body)
	}
	// Bad input names the field, as the CLI does.
	code, body = h.do("POST", "/api/v1/tenants/acme/bookings", h.acmeBook, `{"gpus":"h100","start":"soon","tenant":"acme"}`)
	if code != http.StatusBadRequest || !strings.Contains(body, `"field":"tenant"`) {
		t.Errorf("tenant in the body: %d\n%s", code, body)
	}
	code, body = h.do("POST", "/api/v1/tenants/acme/bookings", h.acmeBook, `{"gpus":"h100","start":"soon"}`)
	if code != http.StatusBadRequest || !strings.Contains(body, `"field":"gpus"`) || !strings.Contains(body, `"field":"start"`) {
		t.Errorf("bad input: %d\n%s", code, body)
	}
	// A capacity refusal is 409 and names other tenants by count only.
	code, body = h.do("POST", "/api/v1/tenants/acme/bookings", h.acmeBook, `{"gpus":"h100:3","start":"now","duration":"1h"}`)
	if code != http.StatusConflict || !strings.Contains(body, "of other tenants") {
		t.Errorf("no capacity: %d\n%s", code, body)
	}
	assertNoLeak(t, "refusal", body)
	// Too large a body.
	code, _ = h.do("POST", "/api/v1/tenants/acme/bookings", h.acmeBook, `{"purpose":"`+strings.Repeat("x", 2<<20)+`"}`)
	if code != http.StatusRequestEntityTooLarge {
		t.Errorf("2 MiB body: %d; want 413", code)
	}
}

func TestReadRoutes(t *testing.T) {
	h := newHarness(t)
	_, body := h.do("GET", "/api/v1/tenants/acme/quota", h.acmeRead, "")
	var q struct{ Types []TypeUse }
	if err := json.Unmarshal([]byte(body), &q); err != nil {
		t.Fatal(err)
	}
	got := map[string]TypeUse{}
	for _, u := range q.Types {
		got[u.Type] = u
	}
	if u := got["h100"]; u.Quota == nil || *u.Quota != 2 || u.InQuota != 2 || u.Allocated != 2 || u.Pending != 1 {
		t.Errorf("h100 use: %+v\n%s", u, body)
	}
	if u := got["1g.10gb"]; u.Quota == nil || *u.Quota != 2 || u.Pending != 1 || u.InQuota != 0 {
		t.Errorf("1g.10gb use: %+v", u)
	}
	_, body = h.do("GET", "/api/v1/tenants/acme/jobs/pending", h.acmeRead, "")
	var pj struct{ Jobs []PendingJob }
	if err := json.Unmarshal([]byte(body), &pj); err != nil || len(pj.Jobs) != 2 {
		t.Fatalf("pending: %v\n%s", err, body)
	}
	if j := pj.Jobs[0]; j.ID != 12 || !j.QuotaHold || j.Burst != "move" {
		t.Errorf("quota-held job: %+v", j)
	}
	if j := pj.Jobs[1]; j.ID != 13 || j.QuotaHold || j.Burst != "none" || j.Reason != "Priority" {
		t.Errorf("priority job: %+v", j)
	}
	_, body = h.do("GET", "/api/v1/tenants/acme/burst", h.acmeRead, "")
	if !strings.Contains(body, `"monthlyBudget":"100.00"`) || !strings.Contains(body, `"spent":"10.00"`) {
		t.Errorf("burst:\n%s", body)
	}
	_, body = h.do("GET", "/api/v1/tenants/acme/usage", h.acmeRead, "")
	var u usageView
	if err := json.Unmarshal([]byte(body), &u); err != nil || u.GPUSeconds != 7200 || u.Amount != "5.00" || u.Status != "open" || len(u.Rows) != 1 {
		t.Errorf("usage: %v\n%s", err, body)
	}
	if code, body := h.do("GET", "/api/v1/tenants/acme/usage?period=2026-13", h.acmeRead, ""); code != 400 || !strings.Contains(body, `"field":"period"`) {
		t.Errorf("bad period: %d %s", code, body)
	}
	// Usage is priced once per cycle per tenant.
	calls := h.usage.calls
	for range 5 {
		h.do("GET", "/api/v1/tenants/acme/usage", h.acmeRead, "")
	}
	if h.usage.calls != calls {
		t.Errorf("usage priced %d more times in one cycle", h.usage.calls-calls)
	}
	// One jobs read for the snapshot and the burst plan together.
	if h.jobs.reads != 1 {
		t.Errorf("jobs read %d times for one snapshot; want 1", h.jobs.reads)
	}
	// Availability hides why capacity is reduced from tenants.
	_, body = h.do("GET", "/api/v1/tenants/acme/slots?type=h100&count=4&duration=1h", h.acmeRead, "")
	if !strings.Contains(body, `"slots":[{"start"`) {
		t.Errorf("slots:\n%s", body)
	}
	_, body = h.do("GET", "/api/v1/pool", h.admin, "")
	var pv PoolView
	if err := json.Unmarshal([]byte(body), &pv); err != nil || len(pv.Types) != 2 || len(pv.Tenants) != 2 {
		t.Fatalf("pool: %v\n%s", err, body)
	}
	if p := pv.Types[1]; p.Type != "h100" || p.Capacity != 4 || p.Allocated != 3 || p.Free != 1 || p.Booked != 2 || p.Bookable != 4 {
		t.Errorf("pool h100: %+v", p)
	}
}

// TestNewTenantIsSeenAtOnce: a tenant added after the snapshot was taken
// (even while a read is under way) is found by its first request.
func TestNewTenantIsSeenAtOnce(t *testing.T) {
	h := newHarness(t)
	h.do("GET", "/api/v1/tenants/acme", h.acmeRead, "") // the snapshot, without gamma
	h.names.mu.Lock()
	h.names.ts = append(h.names.ts, tenant.Tenant{Name: "gamma", State: tenant.Active})
	h.names.mu.Unlock()
	h.setNow(h.now.Add(10 * time.Millisecond))
	if code, body := h.do("GET", "/api/v1/tenants/gamma", h.admin, ""); code != 200 {
		t.Errorf("a new tenant: %d %s", code, body)
	}
}

// TestCurrentUsageFromTheSnapshotIsTheTenantsSummary: the current period
// answered from the snapshot (every account priced at once) is what the
// tenant's own Summary gives.
func TestCurrentUsageFromTheSnapshotIsTheTenantsSummary(t *testing.T) {
	h := newHarness(t)
	_, body := h.do("GET", "/api/v1/tenants/acme/usage", h.acmeRead, "")
	sm, err := h.usage.Summary(context.Background(), meter.PeriodOf(h.now), "acme")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(usageOf(sm, "acme", h.now.Truncate(time.Second)))
	if strings.TrimSpace(body) != string(want) {
		t.Errorf("usage from the snapshot:\n%s\nthe tenant's Summary:\n%s", body, want)
	}
}

// TestDeletedTokenRefusedWithinASecond: a token deleted while in use is
// refused once the lookup cache's second is over.
func TestDeletedTokenRefusedWithinASecond(t *testing.T) {
	h := newHarness(t)
	if code, _ := h.do("GET", "/api/v1/tenants/acme", h.acmeBook, ""); code != 200 {
		t.Fatal(code)
	}
	if _, err := h.tokens.Delete(context.Background(), "test", "acme", "ci"); err != nil {
		t.Fatal(err)
	}
	h.setNow(h.now.Add(tokenTTL))
	if code, _ := h.do("GET", "/api/v1/tenants/acme", h.acmeBook, ""); code != 401 {
		t.Errorf("a deleted token after %s: %d; want 401", tokenTTL, code)
	}
}
