package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/reservetest"
	"github.com/gpubridge/gpubridge/bridge/reserve/store"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/tokenstore"
	"github.com/gpubridge/gpubridge/internal/money"
)

// Markers of tenant beta's data: none may appear in an answer to acme.
var betaMarkers = []string{"beta", "bsecretuser", "bsecret-job", "bsecret-purpose"}

// countingTenants counts the snapshot's reads of the tenants.
type countingTenants struct {
	mu    sync.Mutex
	ts    []tenant.Tenant
	reads int
}

func (f *countingTenants) List(context.Context) ([]tenant.Tenant, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	return f.ts, nil
}

func (f *countingTenants) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

type fakeJobs struct {
	mu    sync.Mutex
	jobs  []burst.Job
	reads int
}

func (f *fakeJobs) ListJobs(context.Context) ([]burst.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	return f.jobs, nil
}

// planner decides with the burst package's own Decide on the cached jobs.
type planner struct {
	jobs    burst.JobLister
	tenants []burst.Tenant
}

func (p planner) Plan(ctx context.Context) (burst.Plan, error) {
	js, err := p.jobs.ListJobs(ctx)
	if err != nil {
		return burst.Plan{}, err
	}
	return burst.Decide(burst.Input{Now: time.Now(), Config: burst.Config{PoolPartition: "pool", OnDemandPartition: "ondemand", OnDemandQOS: "ondemand"},
		Tenants: p.tenants, Jobs: js, Spent: map[string]int64{"acme": 1000}, Rates: burst.Rates{PerGPUHour: map[string]pricing.Price{"h100": 250}, Currency: "EUR", Minor: 2}}), nil
}

func (p planner) StoredRefusals(context.Context) ([]burst.StoredRefusal, error) { return nil, nil }

// fakeUsage prices one row per account and type.
type fakeUsage struct {
	rows   map[string][]export.Row // by account
	closed map[meter.Period]bool
	calls  int
	mu     sync.Mutex
}

func (f *fakeUsage) Summary(_ context.Context, p meter.Period, account string) (export.Summary, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	card := pricing.Card{Version: pricing.CurrentVersion, Currency: "EUR"}
	s := export.Summary{Meta: export.Meta{Period: p, Card: card, Closed: f.closed[p]}, Amount: money.Zero(card.Unit())}
	for acct, rows := range f.rows {
		if account != "" && acct != account {
			continue
		}
		for _, r := range rows {
			r.Usage = p
			s.Rows = append(s.Rows, r)
			s.GPUSeconds += r.GPUSeconds
			if r.Rate >= 0 {
				s.Amount, _ = s.Amount.Add(r.Amount)
			}
		}
	}
	return s, nil
}

// fakeCoster prices every booked GPU-hour at 2.00 EUR.
type fakeCoster struct{}

func (fakeCoster) BookedCost(_ string, gpuSeconds int64, _ time.Time) (money.Amount, error) {
	return money.New(gpuSeconds*200/3600, money.Currency{Code: "EUR", Minor: 2}), nil
}

// fakeTokenCases are the token use cases on the memory store.
type fakeTokenCases struct{ st *tokenstore.Memory }

func (f fakeTokenCases) Add(ctx context.Context, actor string, t token.Token) (token.Issued, error) {
	exists := func(_ context.Context, name string) (bool, error) { return name == "acme" || name == "beta", nil }
	t, plain, err := token.Issue(ctx, f.st, exists, actor, t, nil)
	if errors.Is(err, tokenstore.ErrExists) {
		return token.Issued{}, InputError(err)
	}
	return token.Issued{Token: t, Secret: plain}, err
}

func (f fakeTokenCases) List(ctx context.Context, tenant string) ([]token.Token, error) {
	return f.st.List(ctx, tenant, false)
}

func (f fakeTokenCases) Delete(ctx context.Context, actor, tenant, name string) (token.Token, error) {
	t, err := f.st.Delete(ctx, actor, tenant, name)
	if errors.Is(err, tokenstore.ErrNotFound) {
		return t, ErrNotFound
	}
	return t, err
}

// testJWTKey is the site's Slurm JWT key in the harness.
var testJWTKey = []byte("the-site-s-slurm-jwt-key-of-32-bytes!")

type fakePolicies map[string]reserve.Policy

func (f fakePolicies) BookingTenant(_ context.Context, name string) (reserve.TenantInfo, error) {
	p, ok := f[name]
	if !ok && name != "acme" && name != "beta" {
		return reserve.TenantInfo{}, fmt.Errorf("tenant %q: %w", name, reserve.ErrUnknownTenant)
	}
	return reserve.TenantInfo{Policy: p, Own: ok}, nil
}

// harness is an API over fakes: tenants acme and beta, a cluster of one
// node with 4 h100 and 7 1g.10gb, and tokens of every kind.
type harness struct {
	t      *testing.T
	srv    *Server
	http   *httptest.Server
	tokens *tokenstore.Memory
	reg    *prometheus.Registry
	jobs   *fakeJobs
	usage  *fakeUsage
	svc    *reserve.Service
	slurm  *reservetest.FakeSlurm
	names  *countingTenants
	now    time.Time
	clock  func() time.Time
	mu     sync.Mutex

	// Tokens by role.
	acmeRead, acmeBook, betaBook, admin, expired, revoked string
	// Bookings: acme's and beta's.
	acmeBooking, betaBooking reserve.Booking
}

func (h *harness) setNow(t time.Time) {
	h.mu.Lock()
	h.now = t
	h.mu.Unlock()
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	ctx := context.Background()
	h := &harness{t: t, tokens: tokenstore.NewMemory(), reg: prometheus.NewRegistry(), now: time.Now().UTC().Truncate(time.Second)}
	h.clock = func() time.Time {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.now
	}
	mk := func(tenantName, name string, scope token.Scope, exp time.Time) string {
		plain, hash, err := token.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.tokens.Add(ctx, "test", token.Token{Tenant: tenantName, Name: name, Scope: scope, ExpiresAt: exp, CreatedAt: h.now, CreatedBy: "test", Hash: hash}); err != nil {
			t.Fatal(err)
		}
		return plain
	}
	h.acmeRead = mk("acme", "ro", token.Read, time.Time{})
	h.acmeBook = mk("acme", "ci", token.Book, h.now.Add(time.Hour))
	h.betaBook = mk("beta", "ci", token.Book, time.Time{})
	h.admin = mk("", "ops", token.Admin, time.Time{})
	h.expired = mk("acme", "old", token.Book, h.now.Add(time.Minute))
	h.revoked = mk("acme", "gone", token.Book, time.Time{})
	if _, err := h.tokens.Delete(ctx, "test", "acme", "gone"); err != nil {
		t.Fatal(err)
	}
	budget := money.MustParse("100.00")
	tenants := []tenant.Tenant{
		{Name: "acme", Description: "Acme research", Users: []string{"alice"}, Admins: []string{"carol"}, GPUs: tenant.Quota{"h100": 2, "1g.10gb": 2}, State: tenant.Active,
			Burst: tenant.Burst{Enabled: true, MaxOnDemandGPUs: 4, MonthlyBudget: &budget}},
		{Name: "beta", Description: "bsecret-purpose team", Users: []string{"bsecretuser"}, GPUs: tenant.Quota{"h100": 2}, State: tenant.Active},
	}
	h.jobs = &fakeJobs{jobs: []burst.Job{
		{ID: 11, Name: "train", User: "alice", Account: "acme", Partition: "pool", QOS: "acme", States: []string{"RUNNING"}, GPUs: burst.Request{"h100": 2}, StartTime: h.now.Add(-time.Hour)},
		{ID: 12, Name: "more", User: "alice", Account: "acme", Partition: "pool", QOS: "acme", States: []string{"PENDING"}, Reason: "QOSGrpGRES", GPUs: burst.Request{"h100": 1}, SubmitTime: h.now.Add(-time.Minute), Priority: 10},
		{ID: 13, Name: "wait", User: "alice", Account: "acme", Partition: "pool", QOS: "acme", States: []string{"PENDING"}, Reason: "Priority", GPUs: burst.Request{"1g.10gb": 1}},
		{ID: 21, Name: "bsecret-job", User: "bsecretuser", Account: "beta", Partition: "pool", QOS: "beta", States: []string{"RUNNING"}, GPUs: burst.Request{"h100": 1}},
		{ID: 22, Name: "bsecret-job", User: "bsecretuser", Account: "beta", Partition: "pool", QOS: "beta", States: []string{"PENDING"}, Reason: "QOSGrpGRES", GPUs: burst.Request{"h100": 2}},
	}}
	jc := &JobCache{Jobs: h.jobs, TTL: time.Minute}
	bt := []burst.Tenant{
		{Name: "acme", QOS: "acme", Quota: map[string]int64{"h100": 2, "1g.10gb": 2}, Policy: burst.Policy{Enabled: true, MaxGPUs: 4, Budget: &budget}},
		{Name: "beta", QOS: "beta", Quota: map[string]int64{"h100": 2}},
	}
	slurm := reservetest.NewFakeSlurm(reserve.Node{Name: "gpu-a", GPUs: map[string]int{"h100": 4, "1g.10gb": 7}})
	settings := reserve.Settings{Prefix: "gpubridge-", LeadTime: time.Hour, DefaultPolicy: reserve.Policy{MaxHorizon: reserve.Span(365 * 24 * time.Hour)}}
	st := store.NewMemory().WithClock(h.clock)
	h.svc = &reserve.Service{Store: st, Source: slurm, Tenants: fakePolicies{"acme": {MaxGPUs: map[string]int{"h100": 3}, MaxHorizon: reserve.Span(365 * 24 * time.Hour)}},
		Settings: settings, Now: h.clock}
	var err error
	if h.acmeBooking, err = h.svc.Add(ctx, "test", reserve.Request{Tenant: "acme", Kind: reserve.KindGPU, GPUType: "h100", Count: 1,
		Start: h.now.Add(2 * time.Hour), End: h.now.Add(4 * time.Hour), Purpose: "acme run"}); err != nil {
		t.Fatal(err)
	}
	if h.betaBooking, err = h.svc.Add(ctx, "test", reserve.Request{Tenant: "beta", Kind: reserve.KindGPU, GPUType: "h100", Count: 2,
		Start: h.now.Add(-time.Minute), End: h.now.Add(3 * time.Hour), Purpose: "bsecret-purpose"}); err != nil {
		t.Fatal(err)
	}
	h.usage = &fakeUsage{rows: map[string][]export.Row{
		"acme": {{Key: export.Key{Tenant: "acme", Account: "acme", Type: "h100", Tier: "reserved", Kind: "usage", Rate: 250}, HasTenant: true,
			GPUSeconds: 7200, Amount: money.New(500, money.Currency{Code: "EUR", Minor: 2})}},
		"beta": {{Key: export.Key{Tenant: "beta", Account: "beta", Type: "h100", Tier: "reserved", Kind: "usage", Rate: 250}, HasTenant: true,
			GPUSeconds: 3600, Amount: money.New(250, money.Currency{Code: "EUR", Minor: 2})}},
	}, closed: map[meter.Period]bool{}}
	h.slurm = slurm
	h.names = &countingTenants{ts: tenants}
	inv := &InventoryCache{Source: slurm, TTL: time.Minute}
	reads := &reserve.Service{Store: st, Source: inv, Tenants: h.svc.Tenants, Settings: settings, Now: h.clock}
	live := &Live{Now: h.clock, Interval: time.Hour, Sources: Sources{
		Tenants: h.names, Jobs: jc, Burst: planner{jobs: jc, tenants: bt}, Inventory: inv, Bookings: reads,
		Settings: settings, Usage: h.usage, IngestedThrough: func(context.Context) (time.Time, error) { return h.now.Add(-10 * time.Minute), nil },
		OnDemandPartition: "ondemand", OnDemandQOS: "ondemand",
	}}
	m := NewMetrics(h.reg)
	m.SetLive(live)
	h.srv = New(Options{Tokens: h.tokens, TokenNotFound: tokenstore.ErrNotFound, Live: live, Usage: h.usage, Bookings: h.svc, BookingReads: reads,
		ReservationName: settings.ReservationName, Metrics: m, Now: h.clock, AuthFailures: 6, AuthBurst: 5,
		JWTKey: func() ([]byte, error) { return testJWTKey, nil }, Members: h.names, CancelFreeBefore: 24 * time.Hour,
		Pricing: func(context.Context) (reserve.Coster, error) { return fakeCoster{}, nil }, TokenCases: fakeTokenCases{h.tokens},
		MemberCases: &fakeMemberCases{ts: h.names}})
	h.srv.o.Health, h.srv.o.Exports = newFakeHealth(), fakeExports{} // portal_pages_test.go
	h.http = httptest.NewServer(http.MaxBytesHandler(h.srv, 1<<20))
	t.Cleanup(h.http.Close)
	return h
}

// do sends a request with token tok ("" for none) and returns the status
// and body.
func (h *harness) do(method, path, tok, body string) (int, string) {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r, err := http.NewRequest(method, h.http.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.http.Client().Do(r)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil && !errors.Is(err, io.EOF) {
		h.t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}
