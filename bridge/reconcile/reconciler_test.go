package reconcile_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/reconcile/reconciletest"
	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// memStore is an in-memory reconcile.Store.
type memStore struct{ ts []tenant.Tenant }

func (m *memStore) List(context.Context) ([]tenant.Tenant, error) { return slices.Clone(m.ts), nil }
func (m *memStore) Remove(_ context.Context, _ string, names []string) error {
	m.ts = slices.DeleteFunc(m.ts, func(t tenant.Tenant) bool { return slices.Contains(names, t.Name) && t.IsDeleting() })
	return nil
}

func TestReconcilerRun(t *testing.T) {
	st := &memStore{ts: []tenant.Tenant{acme(), {Name: "old", Users: []string{"zed"}, GPUs: tenant.Quota{"h100": 1}, State: tenant.Active}}}
	cl := &reconciletest.Cluster{}
	var guards []string
	r := &reconcile.Reconciler{Store: st, Cluster: cl, Naming: naming, Actor: "test",
		WriteGuard: func(b []byte) (bool, error) {
			if len(guards) > 0 && guards[len(guards)-1] == string(b) {
				return false, nil
			}
			guards = append(guards, string(b))
			return true, nil
		}}
	ctx := context.Background()
	for range 2 {
		if err := r.Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(guards) != 1 || !strings.Contains(guards[0], "\ntenant old ") {
		t.Fatalf("guard writes: %d %q", len(guards), guards)
	}
	st.ts[1].State = tenant.Deleting
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if len(st.ts) != 1 || st.ts[0].Name != "acme" {
		t.Errorf("store after the deletion finished: %+v", st.ts)
	}
	if len(guards) != 2 || strings.Contains(guards[1], "\ntenant old ") {
		t.Errorf("guard after deletion still lists old: %q", guards)
	}
	if _, ok := cl.QOS("old"); ok {
		t.Error("QOS old still in the cluster")
	}
}
