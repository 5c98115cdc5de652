package tenantadmin

import (
	"context"

	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// Dump returns the store's tenants as the tenants file that restores them
// exactly (tenant.DumpFile): `apply -f` of it into an empty store gives the
// same store back, and against the store it came from it changes nothing.
func (s *Service) Dump(ctx context.Context) (tenant.File, []byte, error) {
	st, err := s.Backends.Store(ctx)
	if err != nil {
		return tenant.File{}, nil, err
	}
	ts, err := st.List(ctx)
	if err != nil {
		return tenant.File{}, nil, err
	}
	f := tenant.DumpFile(ts)
	b, err := f.Marshal()
	return f, b, err
}
