package reconcile

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// ErrConflict: a Slurm object that gpubridge does not own is in the way.
var ErrConflict = errors.New("conflict with Slurm objects not managed by gpubridge")

// Compute reads the cluster (three bulk reads, plus one read of jobs when
// something is to be removed) and returns the plan for tenants, without a
// delete policy (see ComputeWith).
func Compute(ctx context.Context, r Reader, tenants []tenant.Tenant, n tenant.Naming) (*Plan, error) {
	return ComputeWith(ctx, r, tenants, n, Options{})
}

// ComputeScoped is Compute limited to removing the tenants scope accepts
// (see Input.Scope).
func ComputeScoped(ctx context.Context, r Reader, tenants []tenant.Tenant, n tenant.Naming, scope func(string) bool) (*Plan, error) {
	return ComputeWith(ctx, r, tenants, n, Options{Scope: scope})
}

// Options are what a plan is computed with besides the tenants.
type Options struct {
	// Scope limits removals (see Input.Scope); nil: all.
	Scope func(tenant string) bool
	// Deletes is the delete policy (see Input.Deletes).
	Deletes *DeletePolicy
}

// ComputeWith is Compute with options.
func ComputeWith(ctx context.Context, r Reader, tenants []tenant.Tenant, n tenant.Naming, o Options) (*Plan, error) {
	st, err := r.ReadState(ctx)
	if err != nil {
		return nil, fmt.Errorf("read cluster state: %w", err)
	}
	in := Input{Tenants: tenants, Naming: n, State: st, Scope: o.Scope, Deletes: o.Deletes}
	if accts := NeedJobs(in); len(accts) > 0 {
		jobs, err := r.ActiveJobs(ctx, accts)
		if err != nil {
			return nil, fmt.Errorf("read jobs of %d account(s) to be cleaned up: %w", len(accts), err)
		}
		in.Jobs, in.JobsRead = jobs, true
	}
	return Diff(in), nil
}

// Apply makes the plan's changes in dependency order, one batch per kind
// of change: QOS first (associations name them), then accounts, users,
// associations and coordinators, then removals (accounts with their associations first, so that a
// user's default association goes last). It
// stops at the first failed batch; what was done stays done, and the next
// plan shows what is left. A plan with conflicts, or refused by its delete
// policy, is refused whole.
func Apply(ctx context.Context, w Writer, p *Plan) error {
	if err := p.Err(); err != nil {
		return err
	}
	steps := []struct {
		what string
		n    int
		do   func() error
	}{
		{"create or modify QOS", len(p.w.qos), func() error { return w.PutQOS(ctx, p.w.qos) }},
		{"create accounts", len(p.w.createAccts), func() error { return w.CreateAccounts(ctx, p.w.createAccts) }},
		{"create users", len(p.w.createUsers), func() error { return w.CreateUsers(ctx, p.w.createUsers) }},
		{"create or modify user associations", len(p.w.putAssocs), func() error { return w.PutAssocs(ctx, p.w.putAssocs) }},
		{"change default accounts", len(p.w.setDefaults), func() error { return w.SetDefaultAccounts(ctx, p.w.setDefaults) }},
		{"add coordinators", len(p.w.addCoords), func() error { return w.AddCoordinators(ctx, p.w.addCoords) }},
		{"remove coordinators", len(p.w.removeCoords), func() error { return w.RemoveCoordinators(ctx, p.w.removeCoords) }},
		{"delete accounts", len(p.w.deleteAccts), func() error { return w.DeleteAccounts(ctx, p.w.deleteAccts) }},
		{"delete user associations", len(p.w.deleteAssocs), func() error { return w.DeleteAssocs(ctx, p.w.deleteAssocs) }},
		{"delete QOS", len(p.w.deleteQOS), func() error { return w.DeleteQOS(ctx, p.w.deleteQOS) }},
		// Last: nothing depends on descriptions, and a client that cannot
		// change them must not hold back the rest.
		{"modify accounts", len(p.w.modifyAccts), func() error { return w.ModifyAccounts(ctx, p.w.modifyAccts) }},
	}
	for _, s := range steps {
		if s.n == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.do(); err != nil {
			return fmt.Errorf("apply: %s (%d): %w", s.what, s.n, err)
		}
	}
	return nil
}
