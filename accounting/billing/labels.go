package billing

import (
	"context"
	"fmt"
	"strings"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/ledger"
)

// TenantNames lists the tenants' names (bridge/tenantstore.Store).
type TenantNames interface {
	Names(ctx context.Context) ([]string, error)
}

// RemovedTenantNames lists the names of tenants whose deletion finished
// (bridge/tenantstore.Store keeps them as tombstones).
type RemovedTenantNames interface {
	RemovedNames(ctx context.Context) ([]string, error)
}

// TenantProfiles gives the current tenants' profiles (description,
// organization, cost centre) by tenant name; cmd/gpubridge/app reads them from
// bridge/tenantstore.
type TenantProfiles interface {
	Profiles(ctx context.Context) (map[string]export.Profile, error)
}

// TenantLabels maps accounts to tenants: a tenant's Slurm account has the
// tenant's name, compared case-insensitively (as the store and Slurm do).
// When names also lists removed tenants (RemovedTenantNames), their
// accounts keep the tenant's name, so that a tenant deleted mid-month is
// still named on that month's usage lines; a current tenant's spelling
// wins over a tombstone's. When names also gives profiles
// (TenantProfiles), the labeler is an export.Profiler too: exports name
// each tenant's profile, and a period's close stores them.
func TenantLabels(ctx context.Context, names TenantNames) (ledger.Labeler, error) {
	l := ledger.Labels{}
	if rn, ok := names.(RemovedTenantNames); ok {
		gone, err := rn.RemovedNames(ctx)
		if err != nil {
			return nil, fmt.Errorf("removed tenant names: %w", err)
		}
		for _, n := range gone {
			l[strings.ToLower(n)] = n
		}
	}
	ns, err := names.Names(ctx)
	if err != nil {
		return nil, fmt.Errorf("tenant names: %w", err)
	}
	for _, n := range ns {
		l[strings.ToLower(n)] = n
	}
	ll := lowerLabels{Labels: l, profiles: export.Profiles{}}
	if tp, ok := names.(TenantProfiles); ok {
		ps, err := tp.Profiles(ctx)
		if err != nil {
			return nil, fmt.Errorf("tenant profiles: %w", err)
		}
		for n, p := range ps {
			ll.profiles[strings.ToLower(n)] = p
		}
	}
	return ll, nil
}

// lowerLabels looks accounts up case-insensitively.
type lowerLabels struct {
	ledger.Labels
	profiles export.Profiles // by lower-cased name
}

// Profile implements export.Profiler.
func (l lowerLabels) Profile(account string) export.Profile {
	return l.profiles.Profile(strings.ToLower(account))
}

// TenantProfile implements ledger.Profiler: a period's close stores the
// profiles.
func (l lowerLabels) TenantProfile(account string) ledger.TenantProfile {
	return ledger.TenantProfile(l.Profile(account))
}

// snapshotProfiles are a closed period's stored profiles for its export.
func snapshotProfiles(ps map[string]ledger.TenantProfile) export.Profiles {
	out := make(export.Profiles, len(ps))
	for a, p := range ps {
		out[a] = export.Profile(p)
	}
	return out
}

func (l lowerLabels) Tenant(account string) (string, bool) {
	return l.Labels.Tenant(strings.ToLower(account))
}
