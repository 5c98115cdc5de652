package burst

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/internal/money"
)

func TestTenantsFrom(t *testing.T) {
	budget := money.MustParse("2500.00")
	in := []tenant.Tenant{
		{Name: "acme", GPUs: tenant.Quota{"h100": 2}, Burst: tenant.Burst{Enabled: true, MaxOnDemandGPUs: 4, MonthlyBudget: &budget}},
		{Name: "gone", GPUs: tenant.Quota{"h100": 1}, Burst: tenant.Burst{Enabled: true, MaxOnDemandGPUs: 4}, State: tenant.Deleting},
		{Name: "bare"},
	}
	b := money.MustParse("2500.00")
	want := []Tenant{
		{Name: "acme", QOS: "t_acme", Quota: map[string]int64{"h100": 2}, Policy: Policy{Enabled: true, MaxGPUs: 4, Budget: &b}},
		{Name: "gone", QOS: "t_gone", Quota: map[string]int64{"h100": 1}, Policy: Policy{MaxGPUs: 4}},
		{Name: "bare", QOS: "t_bare"},
	}
	if diff := cmp.Diff(want, TenantsFrom(in, "t_")); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

type tenantList struct {
	ts  []Tenant
	err error
}

func (l tenantList) BurstTenants(context.Context) ([]Tenant, error) { return l.ts, l.err }

func TestBudgetAccounts(t *testing.T) {
	b := money.MustParse("1.00")
	zero := money.MustParse("0")
	cases := map[string]struct {
		tenants tenantList
		want    []string
		wantErr bool
	}{
		"those with a budget, a zero budget included": {
			tenants: tenantList{ts: []Tenant{{Name: "acme", Policy: Policy{Budget: &b}}, {Name: "free"}, {Name: "none", Policy: Policy{Budget: &zero}}}},
			want:    []string{"acme", "none"},
		},
		"no budget: an empty list, not nil (nil reads every account)": {
			tenants: tenantList{ts: []Tenant{{Name: "free"}}}, want: []string{},
		},
		"error": {tenants: tenantList{err: errors.New("down")}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := BudgetAccounts(tc.tenants)(context.Background())
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}
