package tenantadmin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/reconcile/reconciletest"
	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// siteWorld is a cluster with a site's own account physics (user zed),
// imported as a tenant, beside a tenant gpubridge created (acme).
func siteWorld(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	cl := &reconciletest.Cluster{}
	cl.Seed(nil, []reconcile.Account{{Account: tenant.Account{Name: "physics", Description: "Physics dept", Organization: "uni"}, Clustered: true}},
		[]tenant.Assoc{{Account: "physics", User: "zed", QOS: []string{"normal"}, DefaultQOS: "normal"}})
	w := newWorld(cl)
	ok(t, w.svc.Add(ctx, team("acme", "alice"), nil, func(tenant.Tenant) error { return nil }))
	if _, err := w.svc.Import(ctx, []string{"physics"}, false, func([]tenant.Tenant, []string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	_, err := w.svc.Apply(ctx, ApplyRequest{})
	ok(t, err)
	return w
}

func stateOf(t *testing.T, w *world, name string) tenant.State {
	t.Helper()
	st, err := w.store.Get(context.Background(), name)
	ok(t, err)
	return st.State
}

func TestDeleteTenantsReleaseOrPurge(t *testing.T) {
	ctx := context.Background()
	w := siteWorld(t)
	var seen []Deletion
	confirm := func(ds []Deletion) error { seen = ds; return nil }

	// Plain delete: the adopted tenant is released, the other deleted.
	ok(t, w.svc.DeleteTenants(ctx, []string{"physics", "acme"}, false, confirm))
	if want := []Deletion{{Name: "physics", Release: true}, {Name: "acme"}}; !slices.Equal(seen, want) {
		t.Errorf("confirm saw %v, want %v", seen, want)
	}
	if a, p := stateOf(t, w, "acme"), stateOf(t, w, "physics"); a != tenant.Deleting || p != tenant.Releasing {
		t.Errorf("states acme %s physics %s", a, p)
	}
	// Deleting again without --purge keeps how; --purge turns the release
	// into a purge (and is accepted for a tenant gpubridge created).
	ok(t, w.svc.DeleteTenants(ctx, []string{"physics"}, false, confirm))
	if p := stateOf(t, w, "physics"); p != tenant.Releasing {
		t.Errorf("physics after a second delete: %s", p)
	}
	ok(t, w.svc.DeleteTenants(ctx, []string{"physics", "acme"}, true, confirm))
	if a, p := stateOf(t, w, "acme"), stateOf(t, w, "physics"); a != tenant.Deleting || p != tenant.Deleting {
		t.Errorf("after --purge: acme %s physics %s", a, p)
	}
	ok(t, w.svc.DeleteTenants(ctx, []string{"physics"}, false, confirm))
	if p := stateOf(t, w, "physics"); p != tenant.Deleting {
		t.Errorf("a purge under way turned back into a release: %s", p)
	}
}

// An adopted tenant imported before origins were recorded cannot be
// released: plain delete refuses with the fix, --purge deletes it.
func TestDeleteAdoptedWithoutOriginNeedsPurge(t *testing.T) {
	ctx := context.Background()
	w := newWorld(nil)
	old := team("legacy", "zed")
	old.Adopted = true
	_, err := w.store.Put(ctx, "test", []tenant.Tenant{old})
	ok(t, err)
	err = w.svc.DeleteTenants(ctx, []string{"legacy"}, false, func([]Deletion) error { return nil })
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "gpubridge delete tenant legacy --purge") {
		t.Fatalf("plain delete of an adopted tenant without origin: %v", err)
	}
	if s := stateOf(t, w, "legacy"); s != tenant.Active {
		t.Errorf("refused delete changed the state: %s", s)
	}
	ok(t, w.svc.DeleteTenants(ctx, []string{"legacy"}, true, func([]Deletion) error { return nil }))
	if s := stateOf(t, w, "legacy"); s != tenant.Deleting {
		t.Errorf("after --purge: %s", s)
	}
}

// Through the use cases: a release leaves the site's account and user,
// drops the tenant; a tenants file's delete releases too and its purge
// deletes.
func TestReleaseThroughApplyAndFile(t *testing.T) {
	ctx := context.Background()
	w := siteWorld(t)
	ok(t, w.svc.Delete(ctx, []string{"physics"}, func([]string) error { return nil }))
	res, err := w.svc.Apply(ctx, ApplyRequest{AllowMassDelete: true})
	ok(t, err)
	if fmt.Sprint(res.Plan.Removed, res.Plan.Released) != "[physics] [physics]" {
		t.Errorf("removed %v released %v", res.Plan.Removed, res.Plan.Released)
	}
	st, _ := w.cluster.ReadState(ctx)
	if !slices.ContainsFunc(st.Accounts, func(a reconcile.Account) bool { return a.Name == "physics" && a.Description == "Physics dept" }) ||
		!slices.ContainsFunc(st.Assocs, func(a reconcile.Assoc) bool {
			return a.Account == "physics" && a.User == "zed" && slices.Equal(a.QOS, []string{"normal"})
		}) {
		t.Errorf("the site's account or user is not as it was: %+v %+v", st.Accounts, st.Assocs)
	}
	if _, err := w.store.Get(ctx, "physics"); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("released tenant still stored: %v", err)
	}

	// Import again, then a file: delete releases, purge deletes.
	for _, tc := range []struct {
		file string
		want tenant.State
	}{{"delete: [physics]\n", tenant.Releasing}, {"purge: [physics]\n", tenant.Deleting}} {
		if _, err := w.store.Get(ctx, "physics"); err != nil {
			_, err := w.svc.Import(ctx, []string{"physics"}, false, func([]tenant.Tenant, []string) error { return nil })
			ok(t, err)
		}
		var pv Preview
		_, err := w.svc.Apply(ctx, ApplyRequest{File: []byte(tc.file), Confirm: func(p Preview) error { pv = p; return errStop }})
		if !errors.Is(err, errStop) {
			t.Fatalf("%q: %v", tc.file, err)
		}
		if len(pv.StoreChanges) != 1 || fmt.Sprint(pv.StoreChanges[0].Changes) != fmt.Sprintf("[{State active %s}]", tc.want) {
			t.Errorf("%q: store changes %+v", tc.file, pv.StoreChanges)
		}
	}
}

var errStop = errors.New("stop")
