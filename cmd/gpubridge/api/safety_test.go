package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
)

// Tests of issue 25 (safety, round two): each failed on the code before
// its fix.

// TestMetricLabelsFoldToFixedSets: requests without a token, with methods
// of the client's choosing, on unmatched and matched paths, make no
// series of their own.
func TestMetricLabelsFoldToFixedSets(t *testing.T) {
	h := newHarness(t)
	for i := range 40 {
		for _, path := range []string{"/api/v1/nope", "/api/v1/tenants"} {
			r, _ := http.NewRequest(fmt.Sprintf("M%02d", i), h.http.URL+path, nil)
			resp, err := h.http.Client().Do(r)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
	}
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string]bool{}
	series := 0
	for _, mf := range mfs {
		if mf.GetName() != "gpubridge_api_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			series++
			for _, l := range m.GetLabel() {
				if l.GetName() == "method" {
					methods[l.GetValue()] = true
				}
			}
		}
	}
	for m := range methods {
		if methodLabel(m) != m {
			t.Errorf("method label %q is not in the fixed set", m)
		}
	}
	if series > 4 {
		t.Errorf("80 requests of 40 methods made %d series; want at most 4 (methods %v)", series, methods)
	}
}

// TestBodyOverTheLimitIs413: a booking body over its 64 KiB limit (but
// under the server's) is 413, not 400.
func TestBodyOverTheLimitIs413(t *testing.T) {
	h := newHarness(t)
	code, body := h.do("POST", "/api/v1/tenants/acme/bookings", h.acmeBook, `{"purpose":"`+strings.Repeat("x", 100<<10)+`"}`)
	if code != http.StatusRequestEntityTooLarge {
		t.Errorf("100 KiB body: %d; want 413\n%.300s", code, body)
	}
}

// TestRefusalIsRedactedLikeAvailability: a 409 shows a tenant's token
// neither a foreign reservation's name nor a maintenance reason; an
// admin's still sees them.
func TestRefusalIsRedactedLikeAvailability(t *testing.T) {
	h := newHarness(t)
	h.slurm.Set(reserve.Reservation{Name: "zz-secret-customer-demo", Start: h.now.Add(-time.Hour), End: h.now.Add(48 * time.Hour),
		GPUs: map[string]int{"h100": 2}, Nodes: []string{"gpu-a"}})
	h.srv.o.Live.Sources.Inventory.TTL = 0
	want := `{"gpus":"h100:3","start":"now+5h","duration":"1h"}`
	code, body := h.do("POST", "/api/v1/tenants/acme/bookings", h.acmeBook, want)
	if code != http.StatusConflict {
		t.Fatalf("tenant: %d; want 409\n%s", code, body)
	}
	if strings.Contains(body, "zz-secret") {
		t.Errorf("the refusal names the foreign reservation:\n%s", body)
	}
	if !strings.Contains(body, "unavailable") {
		t.Errorf("the refusal does not say capacity is unavailable:\n%s", body)
	}
	code, body = h.do("POST", "/api/v1/tenants/acme/bookings", h.admin, want)
	if code != http.StatusConflict || !strings.Contains(body, "zz-secret") {
		t.Errorf("admin: %d; want 409 naming the reservation\n%s", code, body)
	}
}

// TestValidTokenWorksAfterFailuresFromItsAddress: 20 failed guesses from
// one address (a login node, a NAT) lock out the guesses, not the valid
// tokens behind it.
func TestValidTokenWorksAfterFailuresFromItsAddress(t *testing.T) {
	h := newHarness(t)
	if code, _ := h.do("GET", "/api/v1/tenants/acme", h.acmeRead, ""); code != http.StatusOK {
		t.Fatalf("before: %d", code)
	}
	for range 20 {
		h.do("GET", "/api/v1/tenants/acme", "gpb_"+strings.Repeat("C", 43), "")
	}
	if code, _ := h.do("GET", "/api/v1/tenants/acme", "gpb_"+strings.Repeat("C", 43), ""); code != http.StatusTooManyRequests {
		t.Errorf("a guess after 20: %d; want 429", code)
	}
	// acmeRead authenticated before, betaBook did not.
	for _, tok := range []string{h.acmeRead, h.betaBook} {
		if code, body := h.do("GET", "/api/v1/tenants", tok, ""); code != http.StatusOK {
			t.Errorf("a valid token after 20 failures: %d; want 200\n%s", code, body)
		}
	}
	// Past the lookups that blocked addresses share, guesses are refused
	// unread; a token that authenticated lately still works.
	for range 150 {
		h.do("GET", "/api/v1/tenants", "gpb_"+strings.Repeat("D", 43), "")
	}
	if code, body := h.do("GET", "/api/v1/tenants", h.acmeRead, ""); code != http.StatusOK {
		t.Errorf("a token seen lately, past the blocked addresses' lookups: %d; want 200\n%s", code, body)
	}
	if v := counter(t, h, "gpubridge_api_auth_failures_total", "unknown"); v > 125 {
		t.Errorf("%v guesses were looked up; want at most about 121 (5 before the limit, 100 + 50/s after)", v)
	}
}

// TestLoginOnlyFromTheSameOrigin: another site cannot post a token to
// /login (login CSRF) or log a browser out; the cookie is HttpOnly,
// SameSite=Strict, and Secure unless the page is on loopback.
func TestLoginOnlyFromTheSameOrigin(t *testing.T) {
	h := newHarness(t)
	c := h.http.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	post := func(path string, hdr map[string]string) *http.Response {
		t.Helper()
		r, _ := http.NewRequest("POST", h.http.URL+path, strings.NewReader(url.Values{"token": {h.acmeRead}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range hdr {
			if k == "Host" {
				r.Host = v
				continue
			}
			r.Header.Set(k, v)
		}
		resp, err := c.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for name, hdr := range map[string]map[string]string{
		"origin":         {"Origin": "https://evil.example"},
		"sec-fetch-site": {"Sec-Fetch-Site": "cross-site"},
	} {
		for _, path := range []string{"/login", "/logout"} {
			if resp := post(path, hdr); resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
				t.Errorf("%s %s: %d %v; want 403 and no cookie", name, path, resp.StatusCode, resp.Cookies())
			}
		}
	}
	cookie := func(resp *http.Response) *http.Cookie {
		for _, ck := range resp.Cookies() {
			if ck.Name == cookieName {
				return ck
			}
		}
		return nil
	}
	resp := post("/login", map[string]string{"Origin": h.http.URL, "Sec-Fetch-Site": "same-origin"})
	if ck := cookie(resp); resp.StatusCode != http.StatusSeeOther || ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Secure {
		t.Errorf("same origin on loopback: %d %+v; want 303 and an HttpOnly, SameSite=Strict cookie, not Secure", resp.StatusCode, ck)
	}
	resp = post("/login", map[string]string{"Host": "gpubridge.example.org"})
	if ck := cookie(resp); resp.StatusCode != http.StatusSeeOther || ck == nil || !ck.Secure {
		t.Errorf("off loopback: %d %+v; want a Secure cookie", resp.StatusCode, ck)
	}
}

// TestAnswersAreBounded: an availability of more steps (or steps times
// types) than one answer holds is 400 naming step and the limit, before
// any work; a list says when it was cut.
func TestAnswersAreBounded(t *testing.T) {
	h := newHarness(t)
	for q, want := range map[string]string{
		"step=1m":                                      "at most 1000 in one answer",
		"from=now&to=now%2B60d&step=1h":                "at most 1000 in one answer",
		"to=now%2B45d&step=1h&type=h100":               "at most 1000 in one answer",
		"to=now%2B20d&step=1h":                         "at most 4000 in one answer", // 480 steps x 2 types fit
		"step=1h&to=now%2B41d&type=h100,1g.10gb,a,b,c": "at most 4000 in one answer",
	} {
		code, body := h.do("GET", "/api/v1/tenants/acme/availability?"+q, h.acmeRead, "")
		if want == "at most 4000 in one answer" && q == "to=now%2B20d&step=1h" {
			if code != http.StatusOK {
				t.Errorf("%s: %d; want 200 (960 buckets)\n%.300s", q, code, body)
			}
			continue
		}
		if code != http.StatusBadRequest || !strings.Contains(body, `"field":"step"`) || !strings.Contains(body, want) {
			t.Errorf("%s: %d; want 400 on step saying %q\n%.300s", q, code, want, body)
		}
	}
	if code, body := h.do("GET", "/api/v1/tenants/acme/bookings?limit=5000", h.acmeRead, ""); code != http.StatusBadRequest || !strings.Contains(body, `"field":"limit"`) {
		t.Errorf("limit=5000: %d\n%s", code, body)
	}
	if code, body := h.do("GET", "/api/v1/tenants/acme/jobs/pending?limit=1", h.acmeRead, ""); code != http.StatusOK || !strings.Contains(body, `"more":true`) || strings.Count(body, `"id":`) != 1 {
		t.Errorf("pending limit=1: %d\n%s", code, body)
	}
}

// TestUnknownParametersAreRefusedAndMakeNoCacheKey: a parameter the route
// does not take is 400 naming it; the same request in another order, or
// with the same values spelled otherwise, is one cache entry.
func TestUnknownParametersAreRefusedAndMakeNoCacheKey(t *testing.T) {
	h := newHarness(t)
	code, body := h.do("GET", "/api/v1/tenants/acme/availability?type=h100&junk=1", h.acmeRead, "")
	if code != http.StatusBadRequest || !strings.Contains(body, `"field":"junk"`) || !strings.Contains(body, "type, from, to, step") {
		t.Errorf("junk: %d\n%s", code, body)
	}
	from := h.now.Add(time.Hour).Truncate(time.Hour)
	for _, q := range []string{
		"type=h100,1g.10gb&step=1h&from=" + from.Format(time.RFC3339) + "&to=" + from.Add(24*time.Hour).Format(time.RFC3339),
		"to=" + from.Add(24*time.Hour).Format(time.RFC3339) + "&from=" + from.Format(time.RFC3339) + "&step=60m&type=1g.10gb,h100",
		"type=1g.10gb,h100,h100&step=3600s&from=" + url.QueryEscape(from.Format(time.RFC3339)) + "&to=" + from.Add(24*time.Hour).Format(time.RFC3339),
	} {
		if code, body := h.do("GET", "/api/v1/tenants/acme/availability?"+q, h.acmeRead, ""); code != http.StatusOK {
			t.Fatalf("%s: %d\n%s", q, code, body)
		}
	}
	if _, n := h.srv.reads.size(); n != 1 {
		t.Errorf("3 spellings of one request made %d cache entries; want 1", n)
	}
}

// TestReadCacheIsBoundedByBytesAndExpires: the cache keeps at most
// cacheBytes, drops the oldest first, never keeps an answer over
// cacheEntryBytes, and forgets an answer after its TTL.
func TestReadCacheIsBoundedByBytesAndExpires(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	c := newAnswers(5*time.Second, 4<<20, func() time.Time { return now })
	body := make([]byte, 512<<10)
	for i := range 100 {
		c.put(fmt.Sprint("k", i), body)
	}
	if b, n := c.size(); b > 4<<20 || n != 7 {
		t.Errorf("100 answers of 512 KiB: %d bytes in %d entries; want within 4 MiB (7 entries)", b, n)
	}
	if _, ok := c.get("k0"); ok {
		t.Error("the oldest answer is still kept")
	}
	if _, ok := c.get("k99"); !ok {
		t.Error("the newest answer is gone")
	}
	c.put("big", make([]byte, cacheEntryBytes+1))
	if _, ok := c.get("big"); ok {
		t.Error("an answer over cacheEntryBytes is kept")
	}
	now = now.Add(5 * time.Second)
	if _, ok := c.get("k99"); ok {
		t.Error("an answer older than its TTL is returned")
	}
}

// TestRequestsAreRateLimitedPerToken: one token past its rate gets 429;
// another token from the same address does not pay for it.
func TestRequestsAreRateLimitedPerToken(t *testing.T) {
	h := newHarness(t)
	limited := 0
	for range 60 {
		if code, _ := h.do("GET", "/api/v1/tenants/acme/quota", h.acmeRead, ""); code == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited < 15 {
		t.Errorf("60 requests at once with one token: %d refused; want about 20 (burst 40)", limited)
	}
	if code, _ := h.do("GET", "/api/v1/tenants/beta", h.betaBook, ""); code != http.StatusOK {
		t.Errorf("another token: %d; want 200", code)
	}
}

// TestOrphanTokenTriggersNoRefresh: a token whose tenant the snapshot does
// not hold (it outlived its tenant) is 404 without a read of the cluster
// per request; an admin asking for unknown names makes at most one read
// per name in unknownTTL, and a few per second in all.
func TestOrphanTokenTriggersNoRefresh(t *testing.T) {
	h := newHarness(t)
	plain, hash, err := token.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.tokens.Add(context.Background(), "test", token.Token{Tenant: "ghost", Name: "ci", Scope: token.Read, CreatedAt: h.now.Add(-time.Hour), Hash: hash}); err != nil {
		t.Fatal(err)
	}
	h.do("GET", "/api/v1/tenants/acme", h.acmeRead, "")
	before := h.names.count()
	for i := range 30 {
		h.setNow(h.now.Add(10 * time.Millisecond))
		if code, _ := h.do("GET", "/api/v1/tenants/ghost/quota", plain, ""); code != http.StatusNotFound {
			t.Fatalf("request %d: %d; want 404", i, code)
		}
	}
	if n := h.names.count() - before; n != 0 {
		t.Errorf("30 requests of an orphaned token read the tenants %d times; want 0", n)
	}
	before = h.names.count()
	for i := range 30 {
		h.setNow(h.now.Add(10 * time.Millisecond))
		h.do("GET", fmt.Sprintf("/api/v1/tenants/nobody%d", i%3), h.admin, "")
	}
	if n := h.names.count() - before; n > 3 {
		t.Errorf("30 admin requests for 3 unknown tenants read the tenants %d times; want at most 3", n)
	}
}

// TestRequestsAreRateLimitedPerAddress: an address past its rate gets 429
// whatever its tokens (none here); loopback (a proxy on the host) has no
// rate of its own.
func TestRequestsAreRateLimitedPerAddress(t *testing.T) {
	h := newHarness(t)
	codes := func(addr string) map[int]int {
		out := map[int]int{}
		for range 250 {
			r := httptest.NewRequest("GET", "/api/v1/tenants", nil)
			r.RemoteAddr = addr
			w := httptest.NewRecorder()
			h.srv.ServeHTTP(w, r)
			out[w.Code]++
		}
		return out
	}
	if got := codes("192.0.2.7:4000"); got[http.StatusTooManyRequests] < 40 || got[http.StatusUnauthorized] < 200 {
		t.Errorf("250 requests at once from one address: %v; want 200 answered (burst), the rest 429", got)
	}
	if got := codes("127.0.0.1:4000"); got[http.StatusTooManyRequests] != 0 {
		t.Errorf("250 requests from loopback: %v; want no 429", got)
	}
}

// TestChangedSinceReadIs409: a change refused because another request
// changed the booking first is a conflict (409), not bad input (400).
func TestChangedSinceReadIs409(t *testing.T) {
	s := &Server{}
	changed := reserve.Changed{Problems: reserve.Problems{{Field: "id", Msg: "booking 7 changed since you read it: it is cancelled now"}}}
	cases := map[string]struct {
		err  error
		want int
	}{
		"changed":        {fmt.Errorf("modify booking 7: %w", changed), http.StatusConflict},
		"plain problems": {reserve.Problems{{Field: "duration", Msg: "bad"}}, http.StatusBadRequest},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			w := httptest.NewRecorder()
			q := &req{w: w, r: httptest.NewRequest("PATCH", "/api/v1/tenants/acme/bookings/7", nil), tok: token.Token{Scope: token.Book}}
			if got := s.writeErr(w, q, c.err); got != c.want || w.Code != c.want {
				t.Fatalf("status %d (written %d); want %d\n%s", got, w.Code, c.want, w.Body)
			}
			if !strings.Contains(w.Body.String(), `"problems"`) {
				t.Errorf("the answer lacks its problems:\n%s", w.Body)
			}
		})
	}
}

// TestBookingPolicyIsShownToItsTenant: a tenant reads the limits that bind
// its bookings (issue 25 item 4: "shown to the tenant"); another tenant's
// token does not.
func TestBookingPolicyIsShownToItsTenant(t *testing.T) {
	h := newHarness(t)
	code, body := h.do("GET", "/api/v1/tenants/acme/booking-policy", h.acmeRead, "")
	if code != http.StatusOK {
		t.Fatalf("acme: %d; want 200\n%s", code, body)
	}
	for _, want := range []string{`"tenant":"acme"`, `"maxGPUs":{"h100":3}`, `"maxHorizon":"365d"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the policy lacks %s:\n%s", want, body)
		}
	}
	if code, body := h.do("GET", "/api/v1/tenants/acme/booking-policy", h.betaBook, ""); code != http.StatusNotFound && code != http.StatusForbidden {
		t.Errorf("beta reads acme's policy: %d\n%s", code, body)
	}
}
