package burst

import (
	"context"
	"fmt"
	"maps"

	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// TenantsFrom maps gpubridge tenants to what the decision needs. The tenant
// QOS is qosPrefix + name (config tenants.qosPrefix). A tenant being
// deleted takes no new on-demand work: its policy reads as disabled. A
// tenant without a GPU quota gets a nil Quota: Slurm's reason is trusted.
func TenantsFrom(ts []tenant.Tenant, qosPrefix string) []Tenant {
	out := make([]Tenant, 0, len(ts))
	for _, t := range ts {
		bt := Tenant{
			Name:  t.Name,
			QOS:   tenant.Naming{QOSPrefix: qosPrefix}.QOSName(t.Name),
			Quota: maps.Clone(map[string]int64(t.GPUs)),
			Policy: Policy{
				Enabled: t.Burst.Enabled && !t.IsDeleting(),
				MaxGPUs: t.Burst.MaxOnDemandGPUs,
			},
		}
		if t.Burst.MonthlyBudget != nil {
			b := *t.Burst.MonthlyBudget
			bt.Policy.Budget = &b
		}
		out = append(out, bt)
	}
	return out
}

// TenantSource lists gpubridge's tenants (bridge/tenantstore.Store, or a
// tenants file).
type TenantSource interface {
	List(ctx context.Context) ([]tenant.Tenant, error)
}

// SourceTenants is the TenantLister over a TenantSource.
type SourceTenants struct {
	Source    TenantSource
	QOSPrefix string
}

var _ TenantLister = SourceTenants{}

// BurstTenants implements TenantLister.
func (s SourceTenants) BurstTenants(ctx context.Context) ([]Tenant, error) {
	ts, err := s.Source.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	return TenantsFrom(ts, s.QOSPrefix), nil
}

// BudgetAccounts lists the tenants whose spend matters: those with a
// budget (the accounts SpendReader needs to read; see spend.Source).
func BudgetAccounts(t TenantLister) func(context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) {
		ts, err := t.BurstTenants(ctx)
		if err != nil {
			return nil, err
		}
		out := []string{}
		for _, x := range ts {
			if x.Policy.Budget != nil {
				out = append(out, x.Name)
			}
		}
		return out, nil
	}
}
