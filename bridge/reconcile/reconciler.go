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
	// Failed are the tenants whose changes Slurm refused (Outcome.Failed).
	Failed []Failure
}

// Apply makes p's changes, then writes the guard data file for the
// tenants that remain and drops the tenants whose deletion finished. The
// guard file is written only after Slurm accepted the changes, so that a
// GPU type is never allowed before its limit exists: a tenant whose
// changes Slurm refused keeps in it only the GPU types whose limits Slurm
// held when the plan was made. A tenant is dropped from the store only
// when all its Slurm objects are gone. When Slurm refused some tenants'
// changes, the rest is applied and the error is ErrPartial; when Slurm
// could not be reached, the guard file and the store are left alone.
func (r *Reconciler) Apply(ctx context.Context, p *Plan, ts []tenant.Tenant) (Result, error) {
	var res Result
	out, err := ApplyOutcome(ctx, r.Cluster, p)
	res.Failed = out.Failed
	if err != nil {
		return res, err
	}
	removed := slices.DeleteFunc(slices.Clone(p.Removed), out.FailedTenant)
	remaining := slices.DeleteFunc(slices.Clone(ts), func(t tenant.Tenant) bool { return slices.Contains(removed, t.Name) })
	// A store refused as not knowing tenants that Slurm has (empty, stale
	// or foreign) does not rewrite the guard file: it keeps what it held.
	unrecorded := out.HeldBack != nil && out.HeldBack.Reason == ReasonUnrecorded
	if r.WriteGuard != nil && !unrecorded {
		w, err := r.WriteGuard(tenant.GuardWith(p.guardTenants(remaining, out), r.Naming, p.SubAccounts))
		if err != nil {
			return res, err
		}
		res.GuardWritten = w
	}
	if len(removed) > 0 {
		if err := r.Store.Remove(ctx, r.Actor, removed); err != nil {
			return res, fmt.Errorf("slurm objects of %v are gone, but: %w", removed, err)
		}
		res.Removed = removed
	}
	return res, out.Err()
}

// guardTenants are the tenants as the guard table may show them: a tenant
// whose changes failed may use only the GPU types whose limits its QOS
// held in Slurm when the plan was read (with those limits), none when its
// QOS did not exist.
func (p *Plan) guardTenants(ts []tenant.Tenant, out Outcome) []tenant.Tenant {
	if len(out.Failed) == 0 {
		return ts
	}
	res := make([]tenant.Tenant, 0, len(ts))
	for _, t := range ts {
		if !out.FailedTenant(t.Name) {
			res = append(res, t)
			continue
		}
		t = t.Clone()
		live := p.liveTRES[p.naming.QOSName(t.Name)]
		gpus := tenant.Quota{}
		for typ := range t.GPUs {
			if n, ok := live[tenant.GPUTRES(typ)]; ok {
				gpus[typ] = n
			}
		}
		t.GPUs = gpus
		res = append(res, t)
	}
	return res
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
	for _, f := range res.Failed {
		log.Warn("reconcile refused by Slurm", "tenant", f.Tenant, "step", f.Step, "objects", f.Objects, "error", f.Error)
	}
	if err != nil {
		return err
	}
	if len(p.Changes) > 0 || res.GuardWritten || len(res.Removed) > 0 {
		log.Info("reconciled", "changes", len(p.Changes), "guard_written", res.GuardWritten, "removed_tenants", res.Removed)
	}
	return nil
}
