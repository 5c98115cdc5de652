package tenantadmin

import (
	"context"
	"slices"

	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// Check validates tenants about to be stored: their fields (early holds
// the problems found while parsing them), the GPU types the cluster has
// and collisions with the names in use. It reports every problem at once;
// when the cluster or the store cannot be reached, the problems found
// without them are still reported, with a note saying what was not
// checked, and otherwise that error is returned. Fields are prefixed
// "tenants[i]" when prefix is true (files).
func Check(ctx context.Context, ts []tenant.Tenant, early tenant.Problems, prefix bool, n tenant.Naming, types GPUTypes, names Names) error {
	ps := append(slices.Clone(early), tenant.ValidateSet(ts, nil, tenant.Rules{Naming: n}, prefix)...)
	var notes []string
	known, terr := types.GPUTypes(ctx)
	if terr != nil {
		notes = append(notes, "GPU types not checked: "+terr.Error())
	}
	existing, serr := names.Names(ctx)
	if serr != nil {
		notes = append(notes, "names not checked against the store: "+serr.Error())
	}
	if terr == nil && serr == nil {
		ps = append(slices.Clone(early), tenant.ValidateSet(ts, existing, tenant.Rules{GPUTypes: known, Naming: n}, prefix)...)
	}
	if len(ps) > 0 {
		return problemsError(ps, notes...)
	}
	if terr != nil {
		return terr
	}
	return serr
}

// fileInput is a parsed and validated tenants file.
type fileInput struct {
	tenants []tenant.Tenant
	deletes []string
	purges  []string
}

// readFile parses and validates a tenants file against the cluster's GPU
// types and the store; the whole file is refused if anything is wrong.
func (s *Service) readFile(ctx context.Context, b []byte) (*fileInput, error) {
	f, ps := tenant.ParseFile(b, nil, tenant.Rules{Naming: s.Naming})
	var notes []string
	types, terr := s.types().GPUTypes(ctx)
	if terr != nil {
		notes = append(notes, "GPU types not checked: "+terr.Error())
	}
	existing, serr := s.names().Names(ctx)
	if serr != nil {
		notes = append(notes, "names not checked against the store: "+serr.Error())
	}
	if terr == nil && serr == nil {
		// A delete of a tenant the store does not hold is already done: a
		// file applied again (GitOps) after the deletion finished is a
		// no-op, not an error (MergeFile skips it).
		f, ps = tenant.ParseFile(b, existing, tenant.Rules{GPUTypes: types, Naming: s.Naming})
	}
	if len(ps) > 0 {
		return nil, problemsError(ps, notes...)
	}
	if terr != nil {
		return nil, terr
	}
	if serr != nil {
		return nil, serr
	}
	return &fileInput{tenants: f.Tenants, deletes: f.Delete, purges: f.Purge}, nil
}

// typesFunc and namesFunc adapt functions to the interfaces.
type typesFunc func(context.Context) ([]string, error)

func (f typesFunc) GPUTypes(ctx context.Context) ([]string, error) { return f(ctx) }

type namesFunc func(context.Context) ([]string, error)

func (f namesFunc) Names(ctx context.Context) ([]string, error) { return f(ctx) }

// types are the cluster's GPU types, connecting on first use.
func (s *Service) types() GPUTypes {
	return typesFunc(func(ctx context.Context) ([]string, error) {
		cl, err := s.Backends.Cluster(ctx)
		if err != nil {
			return nil, err
		}
		return cl.GPUTypes(ctx)
	})
}

// names are the store's tenant names, connecting on first use.
func (s *Service) names() Names {
	return namesFunc(func(ctx context.Context) ([]string, error) {
		st, err := s.Backends.Store(ctx)
		if err != nil {
			return nil, err
		}
		return st.Names(ctx)
	})
}
