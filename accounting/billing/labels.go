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

// TenantLabels maps accounts to tenants: a tenant's Slurm account has the
// tenant's name, compared case-insensitively (as the store and Slurm do).
func TenantLabels(ctx context.Context, names TenantNames) (ledger.Labeler, error) {
	ns, err := names.Names(ctx)
	if err != nil {
		return nil, fmt.Errorf("tenant names: %w", err)
	}
	l := ledger.Labels{}
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
