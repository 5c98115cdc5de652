package tenantadmin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/reconcile/reconciletest"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
)

var naming = tenant.Naming{OnDemandQOS: "ondemand"}

// fakeCluster is the reconcile fake with the GPU types of the testbed.
type fakeCluster struct {
	*reconciletest.Cluster
	lock *fakeLock // writes must happen under it
}

func (c fakeCluster) GPUTypes(context.Context) ([]string, error) {
	return []string{"h100", "1g.10gb", "3g.40gb"}, nil
}

func (c fakeCluster) PutQOS(ctx context.Context, q []reconcile.QOSWrite) error {
	if err := c.lock.mustHold("PutQOS"); err != nil {
		return err
	}
	return c.Cluster.PutQOS(ctx, q)
}

func (c fakeCluster) DeleteAccounts(ctx context.Context, names []string) error {
	if err := c.lock.mustHold("DeleteAccounts"); err != nil {
		return err
	}
	return c.Cluster.DeleteAccounts(ctx, names)
}

// lockedStore checks that every write holds the lock.
type lockedStore struct {
	*tenantstore.Memory
	lock *fakeLock
}

func (s lockedStore) Commit(ctx context.Context, actor string, e tenant.Edit) error {
	if err := s.lock.mustHold("Commit"); err != nil {
		return err
	}
	return s.Memory.Commit(ctx, actor, e)
}

type fakeLock struct {
	mu    sync.Mutex
	held  bool
	taken int
}

func (l *fakeLock) mustHold(what string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held {
		return fmt.Errorf("%s without the writer lock", what)
	}
	return nil
}

type backends struct {
	store   Store
	cluster Cluster
	lock    *fakeLock
	down    error // Cluster fails with it
}

func (b *backends) Store(context.Context) (Store, error) { return b.store, nil }
func (b *backends) Cluster(context.Context) (Cluster, error) {
	if b.down != nil {
		return nil, b.down
	}
	return b.cluster, nil
}

func (b *backends) WriterLock(context.Context) (func(), error) {
	b.lock.mu.Lock()
	defer b.lock.mu.Unlock()
	if b.lock.held {
		return nil, errors.New("writer lock taken twice")
	}
	b.lock.held = true
	b.lock.taken++
	once := sync.Once{}
	return func() {
		once.Do(func() {
			b.lock.mu.Lock()
			b.lock.held = false
			b.lock.mu.Unlock()
		})
	}, nil
}

type refusals []string

func (r *refusals) Refused(reason string) { *r = append(*r, reason) }

// world is a service over an in-memory store and cluster.
type world struct {
	svc     *Service
	store   *tenantstore.Memory
	cluster *reconciletest.Cluster
	lock    *fakeLock
	guards  []string
	refused refusals
}

func newWorld(cl *reconciletest.Cluster) *world {
	if cl == nil {
		cl = &reconciletest.Cluster{}
	}
	w := &world{store: tenantstore.NewMemory(), cluster: cl, lock: &fakeLock{}}
	b := &backends{store: lockedStore{w.store, w.lock}, cluster: fakeCluster{cl, w.lock}, lock: w.lock}
	w.svc = &Service{Backends: b, Naming: naming, Actor: "test", MaxDeleteShare: 0.10, Refusals: &w.refused,
		WriteGuard: func(data []byte, _ bool) (bool, error) {
			if err := w.lock.mustHold("WriteGuard"); err != nil {
				return false, err
			}
			w.guards = append(w.guards, string(data))
			return true, nil
		}}
	return w
}

func team(name string, users ...string) tenant.Tenant {
	return tenant.Tenant{Name: name, Users: users, GPUs: tenant.Quota{"h100": 1}, State: tenant.Active}
}

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func yes(string, []tenant.FieldChange) error { return nil }

func TestMergeFile(t *testing.T) {
	stored := []tenant.Tenant{
		{Name: "acme", Users: []string{"alice"}, GPUs: tenant.Quota{"h100": 2}, State: tenant.Active, Adopted: true},
		{Name: "globex", Users: []string{"carol"}, State: tenant.Deleting},
		{Name: "initech", State: tenant.Active},
	}
	file := []tenant.Tenant{
		{Name: "acme", Users: []string{"alice"}, GPUs: tenant.Quota{"h100": 4}, State: tenant.Active},
		{Name: "globex", Users: []string{"carol"}, State: tenant.Active},
		{Name: "hooli", Users: []string{"dave"}, State: tenant.Active},
	}
	got, sc := MergeFile(stored, file, []string{"initech"})
	want := []StoreChange{
		{Action: ActionModify, Tenant: "acme", Changes: []tenant.FieldChange{{Title: "GPUs", Old: "h100:2", New: "h100:4"}}},
		{Action: ActionModify, Tenant: "globex", Changes: []tenant.FieldChange{{Title: "State", Old: "deleting", New: "active"}}},
		{Action: ActionCreate, Tenant: "hooli"},
		{Action: ActionDelete, Tenant: "initech", Changes: []tenant.FieldChange{{Title: "State", Old: "active", New: "deleting"}}},
	}
	if diff := cmp.Diff(want, sc); diff != "" {
		t.Errorf("store changes (-want +got):\n%s", diff)
	}
	if !got[0].Adopted {
		t.Error("a file tenant lost the adopted mark of the stored one")
	}
	if got[2].State != tenant.Deleting || len(got) != 4 {
		t.Errorf("merged: %+v", got)
	}
	if stored[0].GPUs["h100"] != 2 {
		t.Error("MergeFile modified the stored tenants")
	}
}

// TestEmptyStoreDeletesNothing: pointed at an empty (or foreign) store,
// apply and the daemon's reconcile refuse the plan: nothing is written to
// Slurm, no guard file, and the refusal is counted. A person's
// --allow-mass-delete lets it through.
func TestEmptyStoreDeletesNothing(t *testing.T) {
	ctx := context.Background()
	real := newWorld(nil)
	for _, tn := range []tenant.Tenant{team("acme", "alice"), team("globex", "bob"), team("hooli", "carol")} {
		ok(t, real.svc.Add(ctx, tn, nil, func(tenant.Tenant) error { return nil }))
	}
	_, err := real.svc.Apply(ctx, ApplyRequest{})
	ok(t, err)

	empty := newWorld(real.cluster)
	real.cluster.ResetCounts()
	var shown *reconcile.Plan
	res, err := empty.svc.Apply(ctx, ApplyRequest{Show: func(pv Preview) { shown = pv.Plan }})
	if !errors.Is(err, reconcile.ErrMassDelete) || res.Applied {
		t.Fatalf("apply on an empty store: applied=%v err=%v", res.Applied, err)
	}
	if shown == nil || shown.MassDelete == nil || shown.MassDelete.Reason != reconcile.ReasonUnrecorded {
		t.Errorf("the preview shown does not carry the refusal: %+v", shown)
	}
	if err := empty.svc.Reconcile(ctx); !errors.Is(err, reconcile.ErrMassDelete) {
		t.Errorf("reconcile on an empty store: %v", err)
	}
	if p, err := empty.svc.Plan(ctx); err != nil || !p.Refused() {
		t.Errorf("plan on an empty store: refused=%v err=%v", p != nil && p.Refused(), err)
	}
	if real.cluster.Writes != 0 || len(empty.guards) != 0 {
		t.Errorf("refused plans wrote: %d Slurm write(s), %d guard file(s)", real.cluster.Writes, len(empty.guards))
	}
	if diff := cmp.Diff(refusals{"unrecorded", "unrecorded", "unrecorded"}, empty.refused); diff != "" {
		t.Errorf("refusals counted (-want +got):\n%s", diff)
	}
	res, err = empty.svc.Apply(ctx, ApplyRequest{AllowMassDelete: true})
	if err != nil || !res.Applied || !res.Plan.MassDelete.Allowed {
		t.Fatalf("apply --allow-mass-delete: %v %+v", err, res.Plan.MassDelete)
	}
	if st, _ := real.cluster.ReadState(ctx); len(st.Accounts) != 0 {
		t.Errorf("accounts left after the allowed mass deletion: %+v", st.Accounts)
	}
}

// TestDeleteOneOfThree: a small site deletes one of its three tenants
// with delete tenant + apply, then the other two at once, then (after
// adding one back) its last one: no flag needed, since a person recorded
// each deletion; the daemon's reconcile meanwhile does not fail. Before
// issue 25 (item 8) the last ones were refused as "all".
func TestDeleteOneOfThree(t *testing.T) {
	ctx := context.Background()
	w := newWorld(nil)
	for _, tn := range []tenant.Tenant{team("acme", "alice"), team("globex", "bob"), team("hooli", "carol")} {
		ok(t, w.svc.Add(ctx, tn, nil, func(tenant.Tenant) error { return nil }))
	}
	_, err := w.svc.Apply(ctx, ApplyRequest{})
	ok(t, err)
	ok(t, w.svc.Delete(ctx, []string{"hooli"}, func([]string) error { return nil }))
	res, err := w.svc.Apply(ctx, ApplyRequest{})
	if err != nil || fmt.Sprint(res.Plan.Removed) != "[hooli]" {
		t.Fatalf("apply after delete tenant hooli: %v, removed %v", err, res.Plan.Removed)
	}
	if names, _ := w.store.Names(ctx); fmt.Sprint(names) != "[acme globex]" {
		t.Errorf("store after the deletion finished: %v", names)
	}
	// The other two at once: recorded by a person, so no flag; the
	// daemon's reconcile applies it as well.
	ok(t, w.svc.Delete(ctx, []string{"acme", "globex"}, func([]string) error { return nil }))
	if err := w.svc.Reconcile(ctx); err != nil {
		t.Fatalf("reconcile after delete tenant acme globex: %v", err)
	}
	if names, _ := w.store.Names(ctx); len(names) != 0 {
		t.Errorf("store after deleting every tenant: %v", names)
	}
	if st, _ := w.cluster.ReadState(ctx); len(st.Accounts) != 0 {
		t.Errorf("accounts left: %+v", st.Accounts)
	}
	// The last tenant of a site, alone.
	ok(t, w.svc.Add(ctx, team("initech", "dave"), nil, func(tenant.Tenant) error { return nil }))
	_, err = w.svc.Apply(ctx, ApplyRequest{})
	ok(t, err)
	ok(t, w.svc.Delete(ctx, []string{"initech"}, func([]string) error { return nil }))
	if res, err := w.svc.Apply(ctx, ApplyRequest{}); err != nil || fmt.Sprint(res.Plan.Removed) != "[initech]" {
		t.Errorf("deleting the last tenant without the flag: %v, removed %v", err, res.Plan.Removed)
	}
	if len(w.refused) != 0 {
		t.Errorf("refusals counted: %v", w.refused)
	}
}

// TestApplyReplansAfterConfirm: when the store or Slurm changes while a
// person reads the plan, apply refuses instead of applying a plan nobody
// saw; the file's store changes are not written either.
func TestApplyReplansAfterConfirm(t *testing.T) {
	ctx := context.Background()
	w := newWorld(nil)
	ok(t, w.svc.Add(ctx, team("acme", "alice"), nil, func(tenant.Tenant) error { return nil }))
	file := []byte("tenants:\n  - name: globex\n    users: [bob]\n    gpus: {h100: 2}\n")
	w.cluster.ResetCounts()
	_, err := w.svc.Apply(ctx, ApplyRequest{File: file, Confirm: func(Preview) error {
		// Another admin changes acme meanwhile.
		_, err := w.svc.Modify(ctx, "acme", map[string]string{"gpus": "h100:3"}, yes)
		return err
	}})
	if !errors.Is(err, ErrPlanChanged) || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("apply after a concurrent change: %v", err)
	}
	if w.cluster.Writes != 0 {
		t.Errorf("%d Slurm write(s) from the refused apply", w.cluster.Writes)
	}
	if _, err := w.store.Get(ctx, "globex"); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("the file's tenant was stored by the refused apply (%v)", err)
	}
	// Unchanged while confirming: applied, and the lock was taken for the
	// plan and again for the writes.
	taken := w.lock.taken
	res, err := w.svc.Apply(ctx, ApplyRequest{File: file, Confirm: func(Preview) error { return nil }})
	if err != nil || !res.Applied || w.lock.taken != taken+2 {
		t.Fatalf("apply: %v applied=%v locks taken %d", err, res.Applied, w.lock.taken-taken)
	}
	g, err := w.store.Get(ctx, "globex")
	if err != nil || g.GPUs["h100"] != 2 {
		t.Errorf("globex after apply -f: %+v %v", g, err)
	}
	if q, _ := w.cluster.QOS("acme"); q.GrpTRES.String() != "gres/gpu:h100=3" {
		t.Errorf("acme QOS = %s", q.GrpTRES)
	}
}

// TestConcurrentEditRefused: two edits read the same version of a tenant;
// the one that commits second is refused ("changed since you read it"),
// so the first is never lost.
func TestConcurrentEditRefused(t *testing.T) {
	ctx := context.Background()
	w := newWorld(nil)
	ok(t, w.svc.Add(ctx, team("acme", "alice"), nil, func(tenant.Tenant) error { return nil }))
	_, err := w.svc.Modify(ctx, "acme", map[string]string{"description": "mine"}, func(string, []tenant.FieldChange) error {
		// While this one waits for confirmation, another adds a user.
		_, err := w.svc.AddUser(ctx, "acme", "bob", false, yes)
		return err
	})
	if !errors.Is(err, tenant.ErrChanged) || !strings.Contains(err.Error(), `tenant "acme" changed since you read it`) {
		t.Fatalf("the second commit: %v; want ErrChanged", err)
	}
	got, _ := w.store.Get(ctx, "acme")
	if strings.Join(got.Users, ",") != "alice,bob" || got.Description != "" {
		t.Errorf("store after the race: users %v, description %q; want the committed edit kept and the refused one absent", got.Users, got.Description)
	}
	// The same for a file: a tenant changed after the file was merged.
	ok(t, w.store.Commit(ctx, "x", tenant.Edit{}))
	err = w.svc.RemoveUser(ctx, "acme", "bob", func(string, []tenant.FieldChange) error {
		return w.svc.Delete(ctx, []string{"acme"}, func([]string) error { return nil })
	})
	if !errors.Is(err, tenant.ErrChanged) {
		t.Errorf("remove user after a concurrent delete: %v", err)
	}
}

// TestChecksWithoutSlurm: with slurmrestd down, bad input is still refused
// with every problem, and a note on what was not checked.
func TestChecksWithoutSlurm(t *testing.T) {
	ctx := context.Background()
	w := newWorld(nil)
	w.svc.Backends.(*backends).down = errors.New("connection refused")
	tn, early := tenant.FromArgs("a;b", map[string]string{"gpus": "h100:-1"})
	err := w.svc.Add(ctx, tn, early, func(tenant.Tenant) error { return nil })
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "GPU types not checked: connection refused") || !strings.Contains(err.Error(), "gpus.h100: -1 is negative") {
		t.Errorf("add with Slurm down: %v", err)
	}
	// Valid input with Slurm down is not stored: the types are unknown.
	if err := w.svc.Add(ctx, team("acme"), nil, func(tenant.Tenant) error { return nil }); err == nil || errors.Is(err, ErrInput) {
		t.Errorf("valid add with Slurm down: %v; want the connection error", err)
	}
	if names, _ := w.store.Names(ctx); len(names) != 0 {
		t.Errorf("stored %v", names)
	}
}

// TestInputErrors: what was asked wrong is ErrInput (exit 2 in the CLI).
func TestInputErrors(t *testing.T) {
	ctx := context.Background()
	w := newWorld(nil)
	ok(t, w.svc.Add(ctx, team("acme", "alice"), nil, func(tenant.Tenant) error { return nil }))
	cases := map[string]error{
		"exists":        w.svc.Add(ctx, team("acme"), nil, func(tenant.Tenant) error { return nil }),
		"modify absent": func() error { _, err := w.svc.Modify(ctx, "nosuch", map[string]string{"cpus": "1"}, yes); return err }(),
		"delete absent": w.svc.Delete(ctx, []string{"acme", "nosuch"}, func([]string) error { return nil }),
		"bad user":      func() error { _, err := w.svc.AddUser(ctx, "acme", "$(id)", false, yes); return err }(),
		"not a user":    w.svc.RemoveUser(ctx, "acme", "zed", yes),
		"import name":   func() error { _, err := w.svc.Import(ctx, []string{"a'b"}, false, nil); return err }(),
		"bad file": func() error {
			_, err := w.svc.Apply(ctx, ApplyRequest{File: []byte("tenants:\n  - name: yes\n")})
			return err
		}(),
	}
	for name, err := range cases {
		if !errors.Is(err, ErrInput) {
			t.Errorf("%s: %v; want ErrInput", name, err)
		}
	}
	if got, _ := w.store.Get(ctx, "acme"); got.IsDeleting() {
		t.Error("delete of acme and a missing tenant marked acme")
	}
}

// TestFileDeleteOfGoneTenantIsNoOp: a tenants file that deletes a tenant
// whose deletion has finished (applied again, GitOps) changes nothing and
// is no error; a delete of a stored tenant in the same file still works.
func TestFileDeleteOfGoneTenantIsNoOp(t *testing.T) {
	ctx := context.Background()
	w := newWorld(nil)
	ok(t, w.svc.Add(ctx, team("acme", "alice"), nil, func(tenant.Tenant) error { return nil }))
	_, err := w.svc.Apply(ctx, ApplyRequest{})
	ok(t, err)
	res, err := w.svc.Apply(ctx, ApplyRequest{File: []byte("delete: [gone]\n")})
	if err != nil || len(res.StoreChanges) != 0 || !res.Plan.Empty() {
		t.Fatalf("delete of a gone tenant: err=%v store changes %v, plan %v; want a no-op", err, res.StoreChanges, res.Plan.Changes)
	}
	res, err = w.svc.Apply(ctx, ApplyRequest{File: []byte("delete: [gone, acme]\n"), AllowMassDelete: true})
	if err != nil || len(res.StoreChanges) != 1 || res.StoreChanges[0].Tenant != "acme" {
		t.Fatalf("delete of gone and acme: err=%v store changes %+v", err, res.StoreChanges)
	}
}

// TestImport: an existing account becomes a tenant; importing it again is
// refused.
func TestImport(t *testing.T) {
	ctx := context.Background()
	cl := &reconciletest.Cluster{}
	cl.Seed([]tenant.QOS{{Name: "physics", Description: "site", GrpTRES: tenant.TRES{"gres/gpu:h100": 4}}},
		[]reconcile.Account{{Account: tenant.Account{Name: "physics", Description: "Physics dept"}, Clustered: true}},
		[]tenant.Assoc{{Account: "physics", User: "zed", QOS: []string{"normal"}}})
	w := newWorld(cl)
	var seen []tenant.Tenant
	names, err := w.svc.Import(ctx, []string{"physics"}, false, func(ts []tenant.Tenant, _ []string) error { seen = ts; return nil })
	if err != nil || fmt.Sprint(names) != "[physics]" || len(seen) != 1 {
		t.Fatalf("import: %v %v %v", names, seen, err)
	}
	got, _ := w.store.Get(ctx, "physics")
	if !got.Adopted || got.GPUs["h100"] != 4 || !slices.Equal(got.Users, []string{"zed"}) {
		t.Errorf("imported %+v", got)
	}
	if _, err := w.svc.Import(ctx, []string{"physics"}, false, nil); !errors.Is(err, ErrInput) {
		t.Errorf("import again: %v", err)
	}
	if names, err := w.svc.Import(ctx, nil, true, nil); err != nil || len(names) != 0 {
		t.Errorf("import --marked with nothing marked: %v %v", names, err)
	}
}
