package burst

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/internal/money"
)

func TestSummarize(t *testing.T) {
	moved := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	started := moved.Add(-time.Hour)
	budget := money.New(5000, money.Currency{Code: "EUR", Minor: 2})
	plan := Plan{
		Minor: 2,
		Bursting: []Bursting{
			{JobID: 3, Tenant: "acme", User: "alice", State: "RUNNING", GPUs: Request{"h100": 1},
				Estimate: 600, Priced: true, Moved: true, Marker: Marker{Moved: moved, Reason: "QOSGrpGRES", Partition: "pool", QOS: "acme"}},
			{JobID: 5, Tenant: "beta", User: "bob", State: "PENDING", Reason: "Priority", GPUs: Request{"h100": 2}, StartTime: started},
			{JobID: 6, Tenant: "beta", User: "bob", State: "PENDING", Reason: "None", GPUs: Request{"h100": 1}},
		},
		Refusals: []Refusal{
			{JobID: 4, Tenant: "acme", User: "alice", GPUs: Request{"h100": 1}, Reason: Budget, Detail: "over"},
			{JobID: 7, Tenant: "beta", User: "bob", GPUs: Request{"h100": 1}, Reason: Cap, Detail: "cap"},
		},
		Tenants: []TenantState{
			{Tenant: "acme", Enabled: true, MaxGPUs: 4, Budget: &budget, OnDemandGPUs: 1, MovedGPUs: 2, Spent: 1000, InFlight: 600, MovedCost: 400},
			{Tenant: "beta", Unpriced: "a100"},
		},
	}
	stored := []StoredRefusal{
		// Same reason as now: its first time is the job's Since.
		{Refusal: Refusal{JobID: 4, Tenant: "acme", Reason: Budget}, FirstAt: moved.Add(time.Minute)},
		// The reason changed since: no Since.
		{Refusal: Refusal{JobID: 7, Tenant: "beta", Reason: Disabled}, FirstAt: moved.Add(2 * time.Minute)},
		// A failed move, known only from the store.
		{Refusal: Refusal{JobID: 8, Tenant: "acme", User: "alice", Reason: MoveFailed, Detail: "Invalid qos"}, GPUs: "h100:1", FirstAt: moved.Add(3 * time.Minute)},
		// A failed move of a job the plan lists already: shown once.
		{Refusal: Refusal{JobID: 3, Tenant: "acme", Reason: MoveFailed}, FirstAt: moved},
	}
	acmeJobs := []OverviewJob{
		{Tenant: "acme", JobID: 3, User: "alice", Status: "bursting", State: "RUNNING", GPUs: "h100:1", Since: moved,
			Reason: "QOSGrpGRES", Detail: "moved by gpubridge from pool/acme; est 6.00"},
		{Tenant: "acme", JobID: 4, User: "alice", Status: "refused", State: "PENDING", GPUs: "h100:1", Since: moved.Add(time.Minute),
			Reason: "budget", Detail: "over"},
	}
	failed := OverviewJob{Tenant: "acme", JobID: 8, User: "alice", Status: "refused", State: "PENDING", GPUs: "h100:1",
		Since: moved.Add(3 * time.Minute), Reason: "move-failed", Detail: "Invalid qos"}
	acme := OverviewTenant{Tenant: "acme", Burst: true, Cap: 4, OnDemandGPUs: 3, Budget: "50.00", Spent: "10.00", InFlight: "6.00",
		Committed: "20.00", Left: "30.00"}
	beta := OverviewTenant{Tenant: "beta", Spent: "0.00", InFlight: "0.00 (+a100 unpriced)", Committed: "0.00"}
	betaJobs := []OverviewJob{
		{Tenant: "beta", JobID: 5, User: "bob", Status: "bursting", State: "PENDING", GPUs: "h100:2", Since: started,
			Reason: "submitted", Detail: "submitted to the on-demand tier; pending: Priority"},
		{Tenant: "beta", JobID: 6, User: "bob", Status: "bursting", State: "PENDING", GPUs: "h100:1",
			Reason: "submitted", Detail: "submitted to the on-demand tier"},
		{Tenant: "beta", JobID: 7, User: "bob", Status: "refused", State: "PENDING", GPUs: "h100:1", Reason: "cap", Detail: "cap"},
	}

	cases := map[string]struct {
		plan    Plan
		stored  []StoredRefusal
		only    string
		want    Overview
		wantErr bool
	}{
		"one tenant": {plan: plan, stored: stored, only: "acme",
			want: Overview{Jobs: append(append([]OverviewJob{}, acmeJobs...), failed), Tenants: []OverviewTenant{acme}}},
		"every tenant": {plan: plan, stored: stored,
			want: Overview{Jobs: []OverviewJob{acmeJobs[0], betaJobs[0], betaJobs[1], acmeJobs[1], betaJobs[2], failed},
				Tenants: []OverviewTenant{acme, beta}}},
		"nothing stored": {plan: plan, only: "beta", want: Overview{Jobs: betaJobs, Tenants: []OverviewTenant{beta}}},
		"unknown tenant": {plan: plan, stored: stored, only: "nobody", wantErr: true},
		"empty":          {want: Overview{Jobs: []OverviewJob{}, Tenants: []OverviewTenant{}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Summarize(tc.plan, tc.stored, tc.only)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("no error; got %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}
