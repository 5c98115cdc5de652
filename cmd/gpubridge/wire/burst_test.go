package wire

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/burst/spend"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/internal/money"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

const tenantsFile = `version: 1
tenants:
  - {name: acme, users: [alice], gpus: {h100: 2}, burst: {enabled: true, maxOnDemandGPUs: 4, monthlyBudget: "25.00"}}
  - {name: beta, users: [bob], gpus: {h100: 1}, burst: {enabled: true, maxOnDemandGPUs: 1}}
`

const rateCard = `version: 1
currency: EUR
rates:
  - type: h100
    tier: ondemand
    perGPUHour: "6.00"
    from: 2020-01-01
`

// noSlurm is a slurmjobs.Client that must not be called.
type noSlurm struct{ t *testing.T }

func (c noSlurm) ListJobsSince(context.Context, slurmrest.JobFilter, time.Time) (slurmrest.JobsPage, error) {
	c.t.Error("ListJobsSince called")
	return slurmrest.JobsPage{}, nil
}

func (c noSlurm) UpdateJob(context.Context, int64, slurmrest.JobUpdate) error {
	c.t.Error("UpdateJob called")
	return nil
}

func write(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func testConfig() config.Config {
	c := config.Default()
	c.Tenants.QOSPrefix = "t_"
	c.Tenants.OnDemandPartition, c.Tenants.OnDemandQOS = "od", "odq"
	return c
}

// TestNewWithFiles: the tenants and rate card files replace the stores,
// the naming comes from the configuration, spend is read only for the
// tenants with a budget, and Burst opens no connection (no database, no
// Slurm call).
func TestNewWithFiles(t *testing.T) {
	ctx := context.Background()
	s, err := Burst(BurstOptions{Config: testConfig(), Cluster: "c1", Slurm: noSlurm{t}, TenantsFile: write(t, "tenants.yaml", tenantsFile),
		RateCardFile: write(t, "rates.yaml", rateCard)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(burst.Config{PoolPartition: "pool", OnDemandPartition: "od", OnDemandQOS: "odq"}, s.Config); diff != "" {
		t.Errorf("controller config (-want +got)\n%s", diff)
	}
	ts, err := s.Tenants.BurstTenants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	budget := money.MustParse("25.00")
	want := []burst.Tenant{
		{Name: "acme", QOS: "t_acme", Quota: map[string]int64{"h100": 2}, Policy: burst.Policy{Enabled: true, MaxGPUs: 4, Budget: &budget}},
		{Name: "beta", QOS: "t_beta", Quota: map[string]int64{"h100": 1}, Policy: burst.Policy{Enabled: true, MaxGPUs: 1}},
	}
	if diff := cmp.Diff(want, ts); diff != "" {
		t.Errorf("tenants (-want +got)\n%s", diff)
	}
	rates, err := s.Rates.OnDemandRates(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(burst.Rates{PerGPUHour: map[string]pricing.Price{"h100": 6_000_000_000}, Currency: "EUR", Minor: 2}, rates); diff != "" {
		t.Errorf("rates (-want +got)\n%s", diff)
	}
	src, ok := s.Spend.(*spend.Source)
	if !ok {
		t.Fatalf("spend is %T, want *spend.Source", s.Spend)
	}
	accounts, err := src.Accounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"acme"}, accounts); diff != "" {
		t.Errorf("spend accounts (-want +got)\n%s", diff)
	}
	if src.Cluster != "c1" || src.TTL != 30*time.Second {
		t.Errorf("spend source: cluster %q TTL %s, want c1 and 30s", src.Cluster, src.TTL)
	}
	if s.Store == nil || s.Stored == nil || s.Mover == nil || s.Jobs == nil {
		t.Errorf("controller not fully wired: %+v", s.Controller)
	}
}

func TestNewErrors(t *testing.T) {
	cases := map[string]struct {
		rateCard string // file contents; "" for a missing file
		want     string
	}{
		"missing rate card": {want: "no such file"},
		"bad rate card":     {rateCard: "version: 1\ncurrency: EUR\nrates: [{type: h100}]\n", want: "rate card "},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "rates.yaml")
			if tc.rateCard != "" {
				p = write(t, "rates.yaml", tc.rateCard)
			}
			_, err := Burst(BurstOptions{Config: testConfig(), Cluster: "c1", Slurm: noSlurm{t}, RateCardFile: p})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if tc.rateCard != "" && !strings.Contains(err.Error(), p) {
				t.Errorf("err = %v, want the file's name", err)
			}
		})
	}
}

func TestFileTenants(t *testing.T) {
	ctx := context.Background()
	if _, err := (BurstFileTenants{Path: filepath.Join(t.TempDir(), "none.yaml")}).List(ctx); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v", err)
	}
	bad := write(t, "tenants.yaml", "version: 1\ntenants:\n  - {name: Bad Name, gpus: {h100: -1}}\n")
	if _, err := (BurstFileTenants{Path: bad}).List(ctx); err == nil || !strings.Contains(err.Error(), "tenants file "+bad) {
		t.Errorf("invalid file: err = %v, want one naming the file", err)
	}
	ts, err := BurstFileTenants{Path: write(t, "tenants.yaml", tenantsFile)}.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].Name != "acme" || ts[1].Name != "beta" {
		t.Errorf("tenants = %+v", ts)
	}
}

// fakes for Overview.
type (
	jobs     []burst.Job
	tenants  []burst.Tenant
	spent    map[string]int64
	rates    burst.Rates
	refusals struct {
		rs   []burst.StoredRefusal
		err  error
		asks []string
	}
)

func (j jobs) ListJobs(context.Context) ([]burst.Job, error)           { return j, nil }
func (t tenants) BurstTenants(context.Context) ([]burst.Tenant, error) { return t, nil }
func (s spent) OnDemandSpend(context.Context, time.Time, time.Time) (map[string]int64, error) {
	return s, nil
}
func (r rates) OnDemandRates(context.Context, time.Time) (burst.Rates, error) {
	return burst.Rates(r), nil
}
func (r *refusals) Refusals(_ context.Context, tenant string) ([]burst.StoredRefusal, error) {
	r.asks = append(r.asks, tenant)
	return r.rs, r.err
}

type failingJobs struct{}

func (failingJobs) ListJobs(context.Context) ([]burst.Job, error) {
	return nil, errors.New("slurmrestd down")
}

// TestOverview: show burst is the live plan merged with the stored
// refusals of the tenant asked for; a failed read fails it.
func TestOverview(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	first := now.Add(-time.Hour)
	ctrl := &burst.Controller{
		Config: burst.Config{PoolPartition: "pool", OnDemandPartition: "ondemand", OnDemandQOS: "ondemand"},
		Jobs: jobs{
			{ID: 1, User: "alice", Account: "acme", Partition: "pool", QOS: "acme", States: []string{"RUNNING"}, GPUs: burst.Request{"h100": 1}, Tasks: 1},
			{ID: 2, User: "alice", Account: "acme", Partition: "pool", QOS: "acme", States: []string{"PENDING"}, Reason: "QOSGrpGRES",
				GPUs: burst.Request{"h100": 1}, Tasks: 1, TimeLimit: time.Hour, SubmitTime: first},
		},
		Tenants: tenants{{Name: "acme", QOS: "acme", Quota: map[string]int64{"h100": 1}, Policy: burst.Policy{Enabled: false, MaxGPUs: 2}}},
		Spend:   spent{},
		Rates:   rates{PerGPUHour: map[string]pricing.Price{}, Minor: 2},
		Now:     func() time.Time { return now },
	}
	stored := &refusals{rs: []burst.StoredRefusal{{Refusal: burst.Refusal{JobID: 2, Tenant: "acme", Reason: burst.Disabled}, FirstAt: first}}}
	s := &BurstService{Controller: ctrl, Stored: stored}
	ov, err := s.Overview(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"acme"}, stored.asks); diff != "" {
		t.Errorf("stored refusals asked for (-want +got)\n%s", diff)
	}
	if len(ov.Jobs) != 1 || ov.Jobs[0].JobID != 2 || ov.Jobs[0].Reason != string(burst.Disabled) || !ov.Jobs[0].Since.Equal(first) {
		t.Errorf("jobs = %+v, want job 2 refused (disabled) since %s", ov.Jobs, first)
	}
	if len(ov.Tenants) != 1 || ov.Tenants[0].Tenant != "acme" || ov.Tenants[0].Burst {
		t.Errorf("tenants = %+v", ov.Tenants)
	}

	stored.err = errors.New("database down")
	if _, err := s.Overview(ctx, ""); err == nil || !strings.Contains(err.Error(), "database down") {
		t.Errorf("store error: err = %v", err)
	}
	ctrl.Jobs = failingJobs{}
	if _, err := s.Overview(ctx, ""); err == nil || !strings.Contains(err.Error(), "slurmrestd down") {
		t.Errorf("Slurm error: err = %v", err)
	}
}
