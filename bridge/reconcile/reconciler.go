package reconcile

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// Store is what the reconciler needs from the tenant store.
type Store interface {
	List(ctx context.Context) ([]tenant.Tenant, error)
	// Remove drops tenants that were being deleted and whose Slurm
	// objects are gone.
	Remove(ctx context.Context, actor string, names []string) error
}

// Reconciler plans and applies the stored tenants against the cluster. The
// CLI's plan and apply and the daemon's periodic reconcile use it.
type Reconciler struct {
	Store   Store
	Cluster Cluster
	Naming  tenant.Naming
	// WriteGuard, when set, writes the job_submit guard's data file
	// (tenant.GuardFor with Naming) and reports whether it changed.
	WriteGuard func(data []byte) (bool, error)
	// Actor is written to the audit log for store changes.
	Actor string
	// Scope limits removals to these tenants' objects (see Input.Scope);
	// nil for the real store.
	Scope func(tenant string) bool
	// Deletes is the delete policy plans are checked against (see
	// DeletePolicy); nil checks nothing (tests of the reconciler itself).
	Deletes *DeletePolicy
	Logger  *slog.Logger
}

// Plan reads the store and the cluster and returns the plan and the
// tenants it was computed for.
func (r *Reconciler) Plan(ctx context.Context) (*Plan, []tenant.Tenant, error) {
	ts, err := r.Store.List(ctx)
	if err != nil {
		return nil, nil, err
	}
	p, err := r.PlanFor(ctx, ts)
	if err != nil {
		return nil, nil, err
	}
	return p, ts, nil
}

// PlanFor reads the cluster and returns the plan for ts (the store's
// tenants, with a tenants file merged in).
func (r *Reconciler) PlanFor(ctx context.Context, ts []tenant.Tenant) (*Plan, error) {
	return ComputeWith(ctx, r.Cluster, ts, r.Naming, Options{Scope: r.Scope, Deletes: r.Deletes})
}

// Result is what Apply did besides the plan's changes.
type Result struct {
	// GuardWritten reports whether the guard data file changed.
	GuardWritten bool
	// Removed are tenants dropped from the store (deletion finished).
	Removed []string
}

// Apply makes p's changes, then writes the guard data file for the
// tenants that remain and drops the tenants whose deletion finished. The
// guard file is written only after Slurm accepted the changes, so that a
// GPU type is never allowed before its limit exists.
func (r *Reconciler) Apply(ctx context.Context, p *Plan, ts []tenant.Tenant) (Result, error) {
	var res Result
	if err := Apply(ctx, r.Cluster, p); err != nil {
		return res, err
	}
	remaining := slices.DeleteFunc(slices.Clone(ts), func(t tenant.Tenant) bool { return slices.Contains(p.Removed, t.Name) })
	if r.WriteGuard != nil {
		w, err := r.WriteGuard(tenant.GuardFor(remaining, r.Naming))
		if err != nil {
			return res, err
		}
		res.GuardWritten = w
	}
	if len(p.Removed) > 0 {
		if err := r.Store.Remove(ctx, r.Actor, p.Removed); err != nil {
			return res, fmt.Errorf("slurm objects of %v are gone, but: %w", p.Removed, err)
		}
		res.Removed = p.Removed
	}
	return res, nil
}

// Name implements the daemon's Job.
func (r *Reconciler) Name() string { return "reconcile" }

// Run plans and applies once (the daemon's periodic reconcile).
func (r *Reconciler) Run(ctx context.Context) error {
	p, ts, err := r.Plan(ctx)
	if err != nil {
		return err
	}
	log := r.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for _, c := range p.Changes {
		log.Info("reconcile change", "change", c.String())
	}
	for _, w := range p.Waiting {
		log.Info("reconcile waiting", "kind", w.Kind, "name", w.Name, "running", w.Running, "pending", w.Pending)
	}
	res, err := r.Apply(ctx, p, ts)
	if err != nil {
		return err
	}
	if len(p.Changes) > 0 || res.GuardWritten || len(res.Removed) > 0 {
		log.Info("reconciled", "changes", len(p.Changes), "guard_written", res.GuardWritten, "removed_tenants", res.Removed)
	}
	return nil
}
