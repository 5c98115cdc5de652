package burst

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/tenant"
)

func TestTenantsFrom(t *testing.T) {
	budget := tenant.Money(250000)
	in := []tenant.Tenant{
		{Name: "acme", GPUs: tenant.Quota{"h100": 2}, Burst: tenant.Burst{Enabled: true, MaxOnDemandGPUs: 4, MonthlyBudget: &budget}},
		{Name: "gone", GPUs: tenant.Quota{"h100": 1}, Burst: tenant.Burst{Enabled: true, MaxOnDemandGPUs: 4}, State: tenant.Deleting},
		{Name: "bare"},
	}
	b := int64(250000)
	want := []Tenant{
		{Name: "acme", QOS: "t_acme", Quota: map[string]int64{"h100": 2}, Policy: Policy{Enabled: true, MaxGPUs: 4, Budget: &b}},
		{Name: "gone", QOS: "t_gone", Quota: map[string]int64{"h100": 1}, Policy: Policy{MaxGPUs: 4}},
		{Name: "bare", QOS: "t_bare"},
	}
	if diff := cmp.Diff(want, TenantsFrom(in, "t_")); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}
