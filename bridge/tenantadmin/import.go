package tenantadmin

import (
	"context"
	"slices"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// Import adopts existing Slurm accounts as tenants (reconcile.Import):
// the named ones, and with marked every account carrying gpubridge's
// marker that the store does not hold. confirm sees the tenants and the
// notes on what cannot be carried over. It returns the names imported;
// none (and no error) when there is nothing to import.
func (s *Service) Import(ctx context.Context, accounts []string, marked bool, confirm func(ts []tenant.Tenant, notes []string) error) ([]string, error) {
	for _, n := range accounts {
		if msg := tenant.CheckName(n); msg != "" {
			return nil, problemsError(tenant.Problems{{Field: "account", Msg: msg}})
		}
	}
	cl, err := s.Backends.Cluster(ctx)
	if err != nil {
		return nil, err
	}
	st, err := s.Backends.Store(ctx)
	if err != nil {
		return nil, err
	}
	existing, err := st.Names(ctx)
	if err != nil {
		return nil, err
	}
	state, err := cl.ReadState(ctx)
	if err != nil {
		return nil, err
	}
	names := slices.Clone(accounts)
	if marked {
		for _, acct := range state.Accounts {
			if tenant.IsMarked(acct.Description) && !slices.Contains(existing, acct.Name) && !slices.Contains(names, acct.Name) {
				names = append(names, acct.Name)
			}
		}
	}
	for _, nm := range names {
		if slices.Contains(existing, nm) {
			return nil, inputf("%s is already a tenant", nm)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	ts, notes, err := reconcile.Import(state, names, s.Naming)
	if err != nil {
		return nil, inputError{err}
	}
	types, err := cl.GPUTypes(ctx)
	if err != nil {
		return nil, err
	}
	if ps := tenant.ValidateSet(ts, existing, tenant.Rules{GPUTypes: types, Naming: s.Naming}, true); len(ps) > 0 {
		return nil, problemsError(ps, "these Slurm objects cannot become tenants as they are")
	}
	if err := confirm(ts, notes); err != nil {
		return nil, err
	}
	var e tenant.Edit
	for _, t := range ts {
		e.Put = append(e.Put, tenant.Stored{Tenant: t}) // new: refused if stored meanwhile
	}
	if err := s.commit(ctx, st, e); err != nil {
		return nil, err
	}
	return names, nil
}
