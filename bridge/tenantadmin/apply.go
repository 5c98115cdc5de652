package tenantadmin

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// Store change actions (as in the audit log).
const (
	ActionCreate = "create"
	ActionModify = "modify"
	ActionDelete = "delete"
)

// StoreChange is what a tenants file changes in the store for one tenant.
type StoreChange struct {
	Action  string               `json:"action"`
	Tenant  string               `json:"tenant"`
	Changes []tenant.FieldChange `json:"changes,omitempty"`
}

// Preview is what an apply will do: the store changes of a tenants file
// and the Slurm plan for the tenants that result.
type Preview struct {
	Plan         *reconcile.Plan
	StoreChanges []StoreChange

	tenants []tenant.Tenant // the plan's tenants
	edit    tenant.Edit     // the file's store changes, at the versions read
}

// Empty reports whether applying changes nothing in Slurm or the store.
func (p Preview) Empty() bool {
	return p.Plan.Empty() && len(p.Plan.Removed) == 0 && len(p.StoreChanges) == 0
}

// same reports whether two previews make the same changes (waiting
// removals may count other jobs).
func same(a, b Preview) bool {
	key := func(p Preview) any {
		return struct {
			C  []reconcile.Change
			R  []string
			K  []reconcile.Conflict
			M  *reconcile.MassDelete
			S  []StoreChange
			Ed tenant.Edit
		}{p.Plan.Changes, p.Plan.Removed, p.Plan.Conflicts, p.Plan.MassDelete, p.StoreChanges, p.edit}
	}
	return reflect.DeepEqual(key(a), key(b))
}

// ApplyRequest is what apply is asked.
type ApplyRequest struct {
	// File is a tenants file (see tenant.File) to take into the store
	// first; nil: the store as it is.
	File []byte
	// AllowMassDelete lets a plan through that the delete policy refuses
	// (a person's --allow-mass-delete; the daemon never sets it).
	AllowMassDelete bool
	// Show, when set, sees the preview before anything changes (and
	// whether or not it can be applied).
	Show func(Preview)
	// Confirm, when set, is asked before a non-empty preview is applied;
	// an error aborts. Apply then plans again, under the writer lock, and
	// refuses (ErrPlanChanged) when the plan differs from the confirmed one.
	// Nil applies without asking.
	Confirm func(Preview) error
}

// ApplyResult is what apply did.
type ApplyResult struct {
	Preview
	// Applied: the store and Slurm changes were made.
	Applied bool
	// GuardWritten: the guard data file changed.
	GuardWritten bool
	// Failed are the tenants whose changes Slurm refused (the rest was
	// applied).
	Failed []reconcile.Failure
}

func (s *Service) reconciler(st Store, cl Cluster, allow bool) *reconcile.Reconciler {
	r := &reconcile.Reconciler{Store: st, Cluster: cl, Naming: s.Naming, Actor: s.Actor,
		Deletes: &reconcile.DeletePolicy{MaxShare: s.MaxDeleteShare, Allow: allow}, Logger: s.Logger}
	if s.WriteGuard != nil {
		r.WriteGuard = func(data []byte) (bool, error) { return s.WriteGuard(data, allow) }
	}
	return r
}

// Plan reads the store and the cluster and returns what apply would do.
// It changes nothing; a plan the delete policy refuses carries the
// refusal (Plan.MassDelete, Plan.Err).
func (s *Service) Plan(ctx context.Context) (*reconcile.Plan, error) {
	st, err := s.Backends.Store(ctx)
	if err != nil {
		return nil, err
	}
	cl, err := s.Backends.Cluster(ctx)
	if err != nil {
		return nil, err
	}
	p, _, err := s.reconciler(st, cl, false).Plan(ctx)
	if err != nil {
		return nil, err
	}
	s.noteRefusal(p)
	return p, nil
}

// PlanFile is Plan after taking a tenants file into the store as apply
// -f would (req.File): the file's store changes and the plan, with nothing
// written and no writer lock taken (plan -f, a GitOps preview). A file
// with problems is refused whole (ErrInput).
func (s *Service) PlanFile(ctx context.Context, file []byte) (Preview, error) {
	f, err := s.readFile(ctx, file)
	if err != nil {
		return Preview{}, err
	}
	st, err := s.Backends.Store(ctx)
	if err != nil {
		return Preview{}, err
	}
	cl, err := s.Backends.Cluster(ctx)
	if err != nil {
		return Preview{}, err
	}
	return s.preview(ctx, st, s.reconciler(st, cl, false), f)
}

// preview reads the store (merging a file into it) and plans.
func (s *Service) preview(ctx context.Context, st Store, r *reconcile.Reconciler, f *fileInput) (Preview, error) {
	stored, err := st.ListStored(ctx)
	if err != nil {
		return Preview{}, err
	}
	pv := Preview{tenants: tenantsOf(stored)}
	if f != nil {
		pv.tenants, pv.StoreChanges, pv.edit = merge(stored, f)
	}
	if pv.Plan, err = r.PlanFor(ctx, pv.tenants); err != nil {
		return Preview{}, err
	}
	s.noteRefusal(pv.Plan)
	return pv, nil
}

// noteRefusal logs and counts a plan the delete policy refused.
func (s *Service) noteRefusal(p *reconcile.Plan) {
	if p.MassDelete == nil {
		return
	}
	m := p.MassDelete
	if m.Allowed {
		s.log().Warn("mass deletion allowed by --allow-mass-delete", "reason", m.Reason, "tenants", m.Tenants, "unrecorded", m.Unrecorded, "assocs", m.Assocs)
		return
	}
	s.log().Warn("plan refused: it deletes too much", "reason", m.Reason, "tenants", m.Tenants, "unrecorded", m.Unrecorded,
		"tenants_in_slurm", m.TenantsInSlurm, "assocs", m.Assocs, "assocs_in_slurm", m.AssocsInSlurm, "message", m.Message, "hint", m.Hint)
	if s.Refusals != nil {
		s.Refusals.Refused(m.Reason)
	}
}

// Apply makes Slurm match the store, after taking a tenants file into it
// (req.File): it plans under the writer lock, shows the preview, asks
// (req.Confirm, without the lock held) and then, under the lock again,
// re-plans and refuses if the plan changed; then it writes the file's
// store changes in one transaction (at the versions read: a concurrent
// edit makes it fail, never lost), the Slurm changes, the guard file, and
// drops the tenants whose deletion finished. A plan with conflicts
// changes nothing; one whose deletions the delete policy refused is
// applied without them (the error wraps reconcile.ErrMassDelete).
func (s *Service) Apply(ctx context.Context, req ApplyRequest) (ApplyResult, error) {
	var f *fileInput
	if req.File != nil {
		var err error
		if f, err = s.readFile(ctx, req.File); err != nil {
			return ApplyResult{}, err
		}
	}
	st, err := s.Backends.Store(ctx)
	if err != nil {
		return ApplyResult{}, err
	}
	cl, err := s.Backends.Cluster(ctx)
	if err != nil {
		return ApplyResult{}, err
	}
	r := s.reconciler(st, cl, req.AllowMassDelete)
	release, err := s.Backends.WriterLock(ctx)
	if err != nil {
		return ApplyResult{}, err
	}
	defer func() { release() }()
	pv, err := s.preview(ctx, st, r, f)
	if err != nil {
		return ApplyResult{}, err
	}
	if req.Show != nil {
		req.Show(pv)
	}
	res := ApplyResult{Preview: pv}
	if len(pv.Plan.Conflicts) > 0 {
		return res, pv.Plan.Err()
	}
	if req.Confirm != nil && !pv.Empty() {
		release() // a person may take their time
		if err := req.Confirm(pv); err != nil {
			return res, err
		}
		if release, err = s.Backends.WriterLock(ctx); err != nil {
			return res, err
		}
		again, err := s.preview(ctx, st, r, f)
		if err != nil {
			return res, err
		}
		if !same(pv, again) {
			return res, fmt.Errorf("%w: nothing was changed; run apply again to see the new plan", ErrPlanChanged)
		}
		res.Preview = again
	}
	if err := st.Commit(ctx, s.Actor, res.edit); err != nil {
		return res, err
	}
	out, err := r.Apply(ctx, res.Plan, res.tenants)
	res.GuardWritten = out.GuardWritten
	res.Failed = out.Failed
	if err != nil {
		// Also deletions held back by the delete policy (ErrMassDelete), or
		// tenants Slurm refused (ErrPartial): the rest was applied, and the
		// error says what was not; Applied stays false.
		return res, err
	}
	res.Applied = true
	return res, nil
}

// Reconcile is the daemon's periodic apply: the store as it is, no
// confirmation, never a mass deletion; each change is logged.
func (s *Service) Reconcile(ctx context.Context) error {
	log := s.log()
	res, err := s.Apply(ctx, ApplyRequest{Show: func(pv Preview) {
		if s.Drift != nil {
			s.Drift(len(pv.Plan.Changes))
		}
		for _, c := range pv.Plan.Changes {
			log.Info("reconcile change", "change", c.String())
		}
		for _, w := range pv.Plan.Waiting {
			log.Info("reconcile waiting", "kind", w.Kind, "name", w.Name, "running", w.Running, "pending", w.Pending)
		}
	}})
	if err != nil {
		return err
	}
	if len(res.Plan.Changes) > 0 || res.GuardWritten || len(res.Plan.Removed) > 0 {
		log.Info("reconciled", "changes", len(res.Plan.Changes), "guard_written", res.GuardWritten, "removed_tenants", res.Plan.Removed)
	}
	return nil
}

// merge is MergeFile over stored tenants, with the edit that writes the
// file's changes at the versions read.
func merge(stored []tenant.Stored, f *fileInput) ([]tenant.Tenant, []StoreChange, tenant.Edit) {
	ts, sc := MergeFile(tenantsOf(stored), f.tenants, f.deletes, f.purges...)
	version := map[string]int64{}
	for _, t := range stored {
		version[t.Name] = t.Version
	}
	var e tenant.Edit
	for _, c := range sc {
		i := slices.IndexFunc(ts, func(t tenant.Tenant) bool { return t.Name == c.Tenant })
		st := tenant.Stored{Tenant: ts[i], Version: version[c.Tenant]}
		if c.Action == ActionDelete {
			e.Delete = append(e.Delete, st)
		} else {
			e.Put = append(e.Put, st)
		}
	}
	return ts, sc, e
}

// MergeFile returns the stored tenants with a file's applied, and what
// changes in the store. A file tenant keeps the adopted mark and origin of
// the stored one and is active (declaring a tenant being deleted takes it
// back); tenants under delete are marked deleting (an adopted one
// releasing: tenant.DeletionState), tenants under purge deleting (a
// release under way becomes a purge); the others are left alone. A
// deletion's store change says the state it sets.
func MergeFile(stored, file []tenant.Tenant, deletes []string, purges ...string) ([]tenant.Tenant, []StoreChange) {
	out := slices.Clone(stored)
	var sc []StoreChange
	for _, ft := range file {
		ft = ft.Clone()
		ft.State = tenant.Active
		i := slices.IndexFunc(out, func(t tenant.Tenant) bool { return t.Name == ft.Name })
		if i < 0 {
			out = append(out, ft)
			sc = append(sc, StoreChange{Action: ActionCreate, Tenant: ft.Name})
			continue
		}
		ft.Adopted, ft.Origin = out[i].Adopted, out[i].Origin.Clone()
		if cs := tenant.Changes(out[i], ft); len(cs) > 0 {
			sc = append(sc, StoreChange{Action: ActionModify, Tenant: ft.Name, Changes: cs})
		}
		out[i] = ft
	}
	mark := func(d string, purge bool) {
		i := slices.IndexFunc(out, func(t tenant.Tenant) bool { return t.Name == d })
		if i < 0 {
			return
		}
		want := tenant.DeletionState(out[i], purge)
		if out[i].IsDeleting() && (!purge || out[i].State == tenant.Deleting) {
			return // already being deleted: keeps how
		}
		if out[i].State == want {
			return
		}
		old := out[i].State
		out[i] = out[i].Clone()
		out[i].State = want
		sc = append(sc, StoreChange{Action: ActionDelete, Tenant: d, Changes: []tenant.FieldChange{{Title: "State", Old: string(old), New: string(want)}}})
	}
	for _, d := range deletes {
		mark(d, false)
	}
	for _, d := range purges {
		mark(d, true)
	}
	return out, sc
}

func tenantsOf(ss []tenant.Stored) []tenant.Tenant {
	out := make([]tenant.Tenant, len(ss))
	for i, s := range ss {
		out[i] = s.Tenant
	}
	return out
}
