package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

func loadSpec(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.yaml is not valid OpenAPI 3: %v", err)
	}
	return doc
}

// TestOpenAPIRoutes: every route in openapi.yaml is served, and every
// served route is in it.
func TestOpenAPIRoutes(t *testing.T) {
	doc := loadSpec(t)
	var inFile []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			inFile = append(inFile, method+" "+path)
		}
	}
	slices.Sort(inFile)
	served := newHarness(t).srv.Routes()
	slices.Sort(served)
	if diff := cmp.Diff(inFile, served); diff != "" {
		t.Errorf("routes (-openapi.yaml +served):\n%s", diff)
	}
}

// TestOpenAPIResponses sends requests to every route (answers 200, 201,
// 400, 401, 403, 404, 409) and validates each request and answer against
// openapi.yaml.
func TestOpenAPIResponses(t *testing.T) {
	doc := loadSpec(t)
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	a, b := fmt.Sprint(h.acmeBooking.ID), fmt.Sprint(h.betaBooking.ID)
	closed := meter.PeriodOf(h.now) - 1
	h.usage.closed[closed] = true
	start := h.now.Add(6 * time.Hour).Format(time.RFC3339)
	carol := slurmJWT(t, testJWTKey, "carol", h.now, time.Hour) // acme's admin
	alice := slurmJWT(t, testJWTKey, "alice", h.now, time.Hour) // acme's member
	cases := []struct {
		method, path, tok, body string
		want                    int
	}{
		{"GET", "/api/v1/tenants", h.acmeRead, "", 200},
		{"GET", "/api/v1/tenants", h.admin, "", 200},
		{"GET", "/api/v1/tenants", "", "", 401},
		{"GET", "/api/v1/pool", h.admin, "", 200},
		{"GET", "/api/v1/pool", h.acmeRead, "", 403},
		{"GET", "/api/v1/tenants/acme", h.acmeRead, "", 200},
		{"GET", "/api/v1/tenants/beta", h.acmeRead, "", 404},
		{"GET", "/api/v1/tenants/acme/quota", h.acmeRead, "", 200},
		{"GET", "/api/v1/tenants/acme/usage", h.acmeRead, "", 200},
		{"GET", "/api/v1/tenants/acme/usage?period=2026-13", h.acmeRead, "", 400},
		{"GET", "/api/v1/tenants/acme/burst", h.acmeRead, "", 200},
		{"GET", "/api/v1/tenants/beta/burst", h.admin, "", 200},
		{"GET", "/api/v1/tenants/acme/jobs/pending", h.acmeRead, "", 200},
		{"GET", "/api/v1/tenants/acme/bookings", h.acmeRead, "", 200},
		{"GET", "/api/v1/tenants/acme/bookings?state=nope", h.acmeRead, "", 400},
		{"POST", "/api/v1/tenants/acme/bookings", h.acmeBook, `{"gpus":"h100:1","start":"` + start + `","duration":"1h"}`, 201},
		{"POST", "/api/v1/tenants/acme/bookings", h.acmeBook, `{"gpus":"h100:3","start":"now","duration":"1h"}`, 409},
		{"POST", "/api/v1/tenants/acme/bookings", h.acmeRead, `{"gpus":"h100:1","start":"now+1h","duration":"1h"}`, 403},
		{"GET", "/api/v1/tenants/acme/bookings/" + a, h.acmeRead, "", 200},
		{"GET", "/api/v1/tenants/acme/bookings/" + b, h.acmeRead, "", 404},
		{"PATCH", "/api/v1/tenants/acme/bookings/" + a, h.acmeBook, `{"duration":"90m"}`, 200},
		{"PATCH", "/api/v1/tenants/acme/bookings/" + a, h.acmeBook, `{"gpus":"h100:9"}`, 400},
		{"DELETE", "/api/v1/tenants/acme/bookings/" + a, h.acmeBook, "", 200},
		{"GET", "/api/v1/tenants/acme/availability?type=h100&step=1d", h.acmeRead, "", 200},
		{"GET", "/api/v1/tenants/acme/availability?step=x", h.acmeRead, "", 400},
		{"GET", "/api/v1/tenants/acme/booking-policy", h.acmeRead, "", 200},
		{"GET", "/api/v1/tenants/beta/booking-policy", h.acmeRead, "", 404},
		{"GET", "/api/v1/tenants/acme/slots?type=h100&count=2&duration=4h", h.acmeRead, "", 200},
		{"GET", "/api/v1/tenants/acme/slots?type=h100&count=x&duration=4h", h.acmeRead, "", 400},
		{"GET", "/api/v1/tenants/acme/bookings?limit=1", h.acmeRead, "", 200},
		{"GET", "/api/v1/tenants/acme/jobs/pending?limit=1", h.acmeRead, "", 200},
		{"GET", "/api/v1/tenants/acme/availability?step=1m", h.acmeRead, "", 400},
		{"GET", "/api/v1/tenants/acme/quota?junk=1", h.acmeRead, "", 400},
		{"POST", "/api/v1/tenants/acme/bookings", h.acmeBook, `{"purpose":"` + strings.Repeat("x", 70<<10) + `"}`, 413},
		{"GET", "/api/v1/tenants/acme/tokens", carol, "", 200},
		{"GET", "/api/v1/tenants/acme/tokens", alice, "", 403},
		{"GET", "/api/v1/tenants/acme/tokens", h.acmeBook, "", 403},
		{"GET", "/api/v1/tenants/beta/tokens", carol, "", 404},
		{"POST", "/api/v1/tenants/acme/tokens", carol, `{"name":"nb","scope":"book","expires":"30d"}`, 201},
		{"POST", "/api/v1/tenants/acme/tokens", carol, `{"name":"root","scope":"admin"}`, 400},
		{"DELETE", "/api/v1/tenants/acme/tokens/nb", carol, "", 200},
		{"DELETE", "/api/v1/tenants/acme/tokens/nb", carol, "", 404},
		{"GET", "/api/v1/tenants/acme/members", carol, "", 200},
		{"GET", "/api/v1/tenants/acme/members", alice, "", 403},
		{"POST", "/api/v1/tenants/acme/members", carol, `{"user":"frank"}`, 201},
		{"POST", "/api/v1/tenants/acme/members", carol, `{"user":"frank"}`, 200},
		{"POST", "/api/v1/tenants/acme/members", carol, `{"user":"Frank"}`, 400},
		{"DELETE", "/api/v1/tenants/acme/members/frank", carol, "", 200},
		{"DELETE", "/api/v1/tenants/acme/members/frank", carol, "", 404},
		{"GET", "/api/v1/tenants/acme/nodes", h.acmeRead, "", 200},
		{"GET", "/api/v1/tenants/beta/nodes", h.acmeRead, "", 404},
		{"GET", "/api/v1/tenants/acme/checks?node=gpu1&limit=5", h.acmeRead, "", 200},
		{"GET", "/api/v1/tenants/acme/checks?since=x", h.acmeRead, "", 400},
		{"POST", "/api/v1/tenants/acme/checks", h.acmeBook, `{"node":"gpu2"}`, 202},
		{"POST", "/api/v1/tenants/acme/checks", h.acmeBook, `{"node":"gpu3"}`, 403},
		{"POST", "/api/v1/tenants/acme/checks", h.acmeRead, `{"node":"gpu2"}`, 403},
		{"GET", "/api/v1/tenants/acme/checks/runs/1", h.acmeRead, "", 200},
		{"GET", "/api/v1/tenants/acme/checks/runs/2", h.acmeRead, "", 404},
		{"GET", "/api/v1/tenants/acme/health/history?since=72h", h.acmeRead, "", 200},
		// The event stream's 200 never ends (events_test.go reads it).
		{"GET", "/api/v1/tenants/beta/events", h.acmeRead, "", 404},
		{"GET", "/api/v1/tenants/acme/events?junk=1", h.acmeRead, "", 400},
		{"GET", "/api/v1/tenants/acme/chargeback?period=2026-13", h.acmeRead, "", 400},
		{"GET", "/api/v1/tenants/acme/chargeback?format=focus&period=" + closed.String(), h.acmeRead, "", 200},
		{"GET", "/api/v1/tenants/acme/chargeback?period=" + meter.PeriodOf(h.now).String(), h.acmeRead, "", 409},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			ctx := context.Background()
			var body io.Reader
			if c.body != "" {
				body = strings.NewReader(c.body)
			}
			r := httptest.NewRequest(c.method, "http://127.0.0.1:9180"+c.path, body)
			if c.body != "" {
				r.Header.Set("Content-Type", "application/json")
			}
			if c.tok != "" {
				r.Header.Set("Authorization", "Bearer "+c.tok)
			}
			route, params, err := router.FindRoute(r)
			if err != nil {
				t.Fatalf("openapi.yaml has no route for it: %v", err)
			}
			seen[c.method+" "+route.Path] = true
			in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route,
				Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
			if c.want < 400 || c.want == 409 {
				if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
					t.Fatalf("the request does not match openapi.yaml: %v", err)
				}
				if c.body != "" {
					r.Body = io.NopCloser(strings.NewReader(c.body))
				}
			}
			w := httptest.NewRecorder()
			h.srv.ServeHTTP(w, r)
			if w.Code != c.want {
				t.Fatalf("status %d; want %d\n%s", w.Code, c.want, w.Body)
			}
			err = openapi3filter.ValidateResponse(ctx, &openapi3filter.ResponseValidationInput{
				RequestValidationInput: in, Status: w.Code, Header: w.Header(), Body: io.NopCloser(bytes.NewReader(w.Body.Bytes())),
				Options: &openapi3filter.Options{IncludeResponseStatus: true},
			})
			if err != nil {
				t.Errorf("the answer does not match openapi.yaml: %v\n%s", err, w.Body)
			}
		})
	}
	for _, rt := range h.srv.Routes() {
		if !seen[rt] {
			t.Errorf("no case for %s", rt)
		}
	}
}

// TestOpenAPIQueryParameters: each route takes the query parameters
// openapi.yaml gives it, and no other (besides tenant= and account=, which
// isolation checks on every route).
func TestOpenAPIQueryParameters(t *testing.T) {
	doc := loadSpec(t)
	h := newHarness(t)
	for _, rt := range h.srv.routes() {
		item := doc.Paths.Find(rt.Path)
		if item == nil {
			t.Fatalf("openapi.yaml has no %s", rt.Path)
		}
		op := item.GetOperation(rt.Method)
		inFile := []string{}
		for _, p := range append(item.Parameters, op.Parameters...) {
			if p.Value.In == "query" && p.Value.Name != "tenant" {
				inFile = append(inFile, p.Value.Name)
			}
		}
		slices.Sort(inFile)
		served := slices.DeleteFunc(append([]string{}, rt.Params...), func(p string) bool { return p == "tenant" })
		slices.Sort(served)
		if diff := cmp.Diff(inFile, served); diff != "" {
			t.Errorf("%s %s query parameters (-openapi.yaml +served):\n%s", rt.Method, rt.Path, diff)
		}
	}
}
