package tenantadmin

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"

	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// Service runs the tenant use cases. The zero value is not usable: set
// Backends and Naming.
type Service struct {
	Backends Backends
	Naming   tenant.Naming
	// Actor is written to the audit log (the invoking user, or the daemon).
	Actor string
	// MaxDeleteShare is reconcile.maxDeleteShare (see reconcile.DeletePolicy).
	MaxDeleteShare float64
	// WriteGuard, when set, writes the job_submit guard's data file after
	// Slurm accepted a plan's changes, and reports whether it changed;
	// allowEmpty (a person's --allow-mass-delete) lets a table without
	// tenants replace one with tenants.
	WriteGuard func(data []byte, allowEmpty bool) (bool, error)
	// Refusals, when set, counts plans the delete policy refused.
	Refusals RefusalRecorder
	// Drift, when set, is told how many changes each reconcile's plan
	// holds (0: Slurm matches the store).
	Drift  func(changes int)
	Logger *slog.Logger
}

func (s *Service) log() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// commit writes e under the writer lock.
func (s *Service) commit(ctx context.Context, st Store, e tenant.Edit) error {
	release, err := s.Backends.WriterLock(ctx)
	if err != nil {
		return err
	}
	defer release()
	return st.Commit(ctx, s.Actor, e)
}

// Add declares a new tenant t (early: the problems found parsing it).
// confirm sees the tenant as it will be stored and may refuse.
func (s *Service) Add(ctx context.Context, t tenant.Tenant, early tenant.Problems, confirm func(tenant.Tenant) error) error {
	if err := Check(ctx, []tenant.Tenant{t}, early, false, s.Naming, s.types(), s.names()); err != nil {
		return err
	}
	st, err := s.Backends.Store(ctx)
	if err != nil {
		return err
	}
	if _, err := st.GetStored(ctx, t.Name); err == nil {
		return inputf("tenant %q already exists; change it with `gpubridge modify tenant %s set ...`", t.Name, t.Name)
	} else if !errors.Is(err, tenant.ErrNotFound) {
		return err
	}
	t.Normalize()
	if err := confirm(t); err != nil {
		return err
	}
	return s.commit(ctx, st, tenant.Edit{Put: []tenant.Stored{{Tenant: t}}})
}

// Modify changes a tenant by `modify tenant NAME set key=value ...`
// (tenant.Update). It returns false when nothing would change; confirm
// sees the field changes.
func (s *Service) Modify(ctx context.Context, name string, set map[string]string, confirm func(name string, cs []tenant.FieldChange) error) (changed bool, err error) {
	st, err := s.Backends.Store(ctx)
	if err != nil {
		return false, err
	}
	old, err := st.GetStored(ctx, name)
	if err != nil {
		return false, notFound(err)
	}
	t, early := tenant.Update(old.Tenant, set)
	if err := Check(ctx, []tenant.Tenant{t}, early, false, s.Naming, s.types(), s.names()); err != nil {
		return false, err
	}
	return s.change(ctx, st, old, t, confirm)
}

// change confirms and writes old -> t at old's version; false when equal.
func (s *Service) change(ctx context.Context, st Store, old tenant.Stored, t tenant.Tenant, confirm func(string, []tenant.FieldChange) error) (bool, error) {
	t.Normalize()
	cs := tenant.Changes(old.Tenant, t)
	if len(cs) == 0 {
		return false, nil
	}
	if err := confirm(t.Name, cs); err != nil {
		return false, err
	}
	if err := s.commit(ctx, st, tenant.Edit{Put: []tenant.Stored{{Tenant: t, Version: old.Version}}}); err != nil {
		return false, err
	}
	return true, nil
}

// Delete marks tenants for deletion (their Slurm objects go at a later
// apply, once their jobs have ended); adopted tenants are released
// (DeleteTenants without purge). confirm sees the names.
func (s *Service) Delete(ctx context.Context, names []string, confirm func(names []string) error) error {
	return s.DeleteTenants(ctx, names, false, func(ds []Deletion) error {
		ns := make([]string, len(ds))
		for i, d := range ds {
			ns[i] = d.Name
		}
		return confirm(ns)
	})
}

// Deletion is how a tenant is deleted.
type Deletion struct {
	Name string
	// Release: the tenant was adopted; gpubridge's own objects go, the
	// site's account and original users stay as they were (see
	// reconcile's release). Otherwise everything goes.
	Release bool
}

// DeleteTenants marks tenants for deletion: an adopted tenant is released
// (tenant.Releasing) unless purge, any other is deleted whole
// (tenant.Deleting; purge changes nothing for it). A tenant already being
// deleted keeps how, unless purge turns a release into a purge. An
// adopted tenant whose origin was not recorded (imported by an older
// gpubridge) cannot be released: it needs purge. confirm sees what
// changes (nothing is written when nothing changes).
func (s *Service) DeleteTenants(ctx context.Context, names []string, purge bool, confirm func(ds []Deletion) error) error {
	st, err := s.Backends.Store(ctx)
	if err != nil {
		return err
	}
	var e tenant.Edit
	var ds []Deletion
	for _, n := range names {
		if slices.ContainsFunc(ds, func(d Deletion) bool { return d.Name == n }) {
			continue
		}
		t, err := st.GetStored(ctx, n)
		if err != nil {
			return notFound(err)
		}
		if t.Adopted && t.Origin == nil && !purge && !t.IsDeleting() {
			return inputf("tenant %s was imported before gpubridge recorded what the site's account held, so it cannot be released (its original account and users told from gpubridge's); `gpubridge delete tenant %s --purge` deletes it whole, as a tenant gpubridge created", n, n)
		}
		want := tenant.DeletionState(t.Tenant, purge)
		if t.IsDeleting() && (!purge || t.State == tenant.Deleting) {
			want = t.State // already being deleted: keeps how
		}
		ds = append(ds, Deletion{Name: n, Release: want == tenant.Releasing})
		if want == t.State {
			continue
		}
		d := t
		d.State = want
		e.Delete = append(e.Delete, d)
	}
	if err := confirm(ds); err != nil {
		return err
	}
	return s.commit(ctx, st, e)
}

// AddUser adds user to a tenant (admin: also a coordinator of its
// account). It returns false when the user is there already.
func (s *Service) AddUser(ctx context.Context, tenantName, user string, admin bool, confirm func(name string, cs []tenant.FieldChange) error) (changed bool, err error) {
	if msg := tenant.CheckUser(user); msg != "" {
		return false, problemsError(tenant.Problems{{Field: "user", Msg: msg}})
	}
	st, err := s.Backends.Store(ctx)
	if err != nil {
		return false, err
	}
	old, err := st.GetStored(ctx, tenantName)
	if err != nil {
		return false, notFound(err)
	}
	return s.change(ctx, st, old, tenant.AddUser(old.Tenant, user, admin), confirm)
}

// RemoveUser removes user from a tenant (their association goes once
// their jobs there have ended).
func (s *Service) RemoveUser(ctx context.Context, tenantName, user string, confirm func(name string, cs []tenant.FieldChange) error) error {
	st, err := s.Backends.Store(ctx)
	if err != nil {
		return err
	}
	old, err := st.GetStored(ctx, tenantName)
	if err != nil {
		return notFound(err)
	}
	if !slices.Contains(old.Users, user) {
		return inputf("user %s is not in tenant %s (users: %s)", user, tenantName, orNone(strings.Join(old.Users, ",")))
	}
	_, err = s.change(ctx, st, old, tenant.RemoveUser(old.Tenant, user), confirm)
	return err
}

// Show returns the named tenants, or all when names is empty.
func (s *Service) Show(ctx context.Context, names []string) ([]tenant.Tenant, error) {
	st, err := s.Backends.Store(ctx)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return st.List(ctx)
	}
	var ts []tenant.Tenant
	for _, n := range names {
		t, err := st.GetStored(ctx, n)
		if err != nil {
			return nil, notFound(err)
		}
		ts = append(ts, t.Tenant)
	}
	return ts, nil
}
