package billing

import (
	"context"
	"fmt"
	"strings"

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

// TenantLabels maps accounts to tenants: a tenant's Slurm account has the
// tenant's name, compared case-insensitively (as the store and Slurm do).
// When names also lists removed tenants (RemovedTenantNames), their
// accounts keep the tenant's name, so that a tenant deleted mid-month is
// still named on that month's usage lines; a current tenant's spelling
// wins over a tombstone's.
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
	return lowerLabels{l}, nil
}

// lowerLabels looks accounts up case-insensitively.
type lowerLabels struct{ ledger.Labels }

func (l lowerLabels) Tenant(account string) (string, bool) {
	return l.Labels.Tenant(strings.ToLower(account))
}
