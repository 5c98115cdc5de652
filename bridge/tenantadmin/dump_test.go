package tenantadmin

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/reconcile/reconciletest"
	"github.com/gpubridge/gpubridge/bridge/tenant"
)

const dumpSource = `version: 1
tenants:
  - name: acme
    description: Acme ML research
    organization: acme-corp
    users: [bob, alice]
    admins: [alice]
    gpus: {h100: 16, 1g.10gb: 14}
    cpus: 256
    memory: 1T
    burst: {enabled: true, maxOnDemandGPUs: 8, monthlyBudget: "2500.00"}
    bookings: {maxGPUs: {h100: 8}, maxWindow: 14d, minLead: 1d, maxHorizon: 90d, monthlySpendLimit: "5000.50"}
  - name: globex
    users: [carol]
    gpus: {3g.40gb: 0}
`

// TestDumpRoundTrip: the dump of a store, applied to an empty store over
// the same cluster, gives the same store (and the same dump, byte for
// byte) and changes nothing in Slurm; applied to the store it came from,
// it changes nothing at all. The adopted mark of an imported tenant
// survives (without it the restore would rewrite the site's account).
func TestDumpRoundTrip(t *testing.T) {
	ctx := context.Background()
	cl := &reconciletest.Cluster{}
	cl.Seed([]tenant.QOS{{Name: "physics", Description: "site", GrpTRES: tenant.TRES{"gres/gpu:h100": 4}}},
		[]reconcile.Account{{Account: tenant.Account{Name: "physics", Description: "Physics dept"}, Clustered: true}},
		[]tenant.Assoc{{Account: "physics", User: "zed", QOS: []string{"normal"}}})
	w := newWorld(cl)
	if _, err := w.svc.Import(ctx, []string{"physics"}, false, func([]tenant.Tenant, []string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Apply(ctx, ApplyRequest{File: []byte(dumpSource)}); err != nil {
		t.Fatal(err)
	}
	_, dump, err := w.svc.Dump(ctx)
	ok(t, err)
	for _, want := range []string{"adopted: true", "monthlySpendLimit: \"5000.50\"", "monthlyBudget: \"2500.00\"", "maxHorizon: 90d", "organization: acme-corp"} {
		if !strings.Contains(string(dump), want) {
			t.Errorf("dump lacks %q:\n%s", want, dump)
		}
	}

	// Against the store it came from: nothing to do.
	res, err := w.svc.Apply(ctx, ApplyRequest{File: dump})
	if err != nil || len(res.StoreChanges) != 0 || !res.Plan.Empty() {
		t.Fatalf("apply of the dump to its own store: err=%v store changes %+v plan %v", err, res.StoreChanges, res.Plan.Changes)
	}

	// Into an empty store over the same cluster: the same store.
	w2 := newWorld(cl)
	res, err = w2.svc.Apply(ctx, ApplyRequest{File: dump})
	if err != nil || !res.Plan.Empty() {
		t.Fatalf("restore: err=%v plan %v", err, res.Plan.Changes)
	}
	_, again, err := w2.svc.Dump(ctx)
	ok(t, err)
	if diff := cmp.Diff(string(dump), string(again)); diff != "" {
		t.Errorf("dump of the restored store differs (-first +second):\n%s", diff)
	}
	want, _ := w.store.List(ctx)
	got, _ := w2.store.List(ctx)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("restored store (-want +got):\n%s", diff)
	}
}

// TestDumpDeleting: a tenant being deleted is dumped under delete, so that
// the restored store finishes its deletion rather than bringing it back.
func TestDumpDeleting(t *testing.T) {
	ctx := context.Background()
	w := newWorld(nil)
	ok(t, w.svc.Add(ctx, team("acme", "alice"), nil, func(tenant.Tenant) error { return nil }))
	ok(t, w.svc.Add(ctx, team("old", "bob"), nil, func(tenant.Tenant) error { return nil }))
	ok(t, w.svc.Delete(ctx, []string{"old"}, func([]string) error { return nil }))
	f, b, err := w.svc.Dump(ctx)
	ok(t, err)
	if len(f.Tenants) != 1 || f.Tenants[0].Name != "acme" || strings.Join(f.Delete, ",") != "old" {
		t.Errorf("dump: %s", b)
	}
}

// TestDumpStoreDown: a store that cannot be read is an error, not an empty dump.
func TestDumpStoreDown(t *testing.T) {
	down := errors.New("database down")
	s := &Service{Backends: failingStore{down}}
	if _, _, err := s.Dump(context.Background()); !errors.Is(err, down) {
		t.Errorf("dump with the store down: %v", err)
	}
}

type failingStore struct{ err error }

func (f failingStore) Store(context.Context) (Store, error)     { return nil, f.err }
func (f failingStore) Cluster(context.Context) (Cluster, error) { return nil, f.err }
func (f failingStore) WriterLock(context.Context) (func(), error) {
	return nil, f.err
}
