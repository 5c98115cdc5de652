package reconcile_test

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

// TestRefusedTenantDoesNotBlockOthers: Slurm refuses a user of one
// tenant among twenty (the whole batch, as a bulk request is refused);
// the apply finds that tenant, applies the other nineteen completely,
// holds back the refused tenant's later changes, reports it with Slurm's
// reason, and the next apply, once Slurm accepts, finishes it.
func TestRefusedTenantDoesNotBlockOthers(t *testing.T) {
	names := numbered(20)
	ts := teams(names...)
	bad := names[13]
	cl := &reconciletest.Cluster{Refuse: map[string]string{bad + "u1": "Invalid user name"}}
	p, err := reconcile.Compute(context.Background(), cl, ts, naming)
	if err != nil {
		t.Fatal(err)
	}
	out, err := reconcile.ApplyOutcome(context.Background(), cl, p)
	if err != nil {
		t.Fatalf("ApplyOutcome: %v", err)
	}
	want := []reconcile.Failure{{Tenant: bad, Step: "create users", Objects: []string{bad + "u1", bad + "u2"}, Error: "fake: CreateUsers refused: Invalid user name"}}
	if diff := cmp.Diff(want, out.Failed); diff != "" {
		t.Errorf("Failed (-want +got):\n%s", diff)
	}
	if err := out.Err(); !errors.Is(err, reconcile.ErrPartial) || !strings.Contains(err.Error(), "tenant "+bad+": create users") {
		t.Errorf("Err() = %v", err)
	}
	// Isolating one tenant among 20 takes a few requests, not 20.
	if cl.Writes > 25 {
		t.Errorf("%d writes; want the refused tenant found in a few retries", cl.Writes)
	}
	left, err := reconcile.Compute(context.Background(), cl, ts, naming)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines(left) {
		if !strings.Contains(l, bad) {
			t.Errorf("after the apply, a change of another tenant is left: %s", l)
		}
	}
	if hasAssoc(t, cl, bad) {
		t.Errorf("the refused tenant's associations were created although its users were refused (held back)")
	}
	delete(cl.Refuse, bad+"u1")
	mustApply(t, cl, ts)
	if again, _ := reconcile.Compute(context.Background(), cl, ts, naming); !again.Empty() {
		t.Errorf("after the retry: %v", lines(again))
	}
}

// TestUnreachableStopsApply: a failure to reach Slurm (not a refusal) is
// returned and nothing after its stage is sent.
func TestUnreachableStopsApply(t *testing.T) {
	cl := &reconciletest.Cluster{FailOn: "PutAssocs"}
	p, _ := reconcile.Compute(context.Background(), cl, teams("a", "b"), naming)
	out, err := reconcile.ApplyOutcome(context.Background(), cl, p)
	if err == nil || errors.Is(err, reconcile.ErrPartial) || len(out.Failed) != 0 {
		t.Fatalf("err = %v, failed = %v; want the injected failure", err, out.Failed)
	}
	if cl.DefaultAccount("au1") == "" {
		t.Error("the first stage was not applied")
	}
	if cl.Writes != 5 { // QOS, accounts, users; then the failed associations and accounts' QOS
		t.Errorf("writes = %d; want 5", cl.Writes)
	}
}

// TestFailedDeleteKeepsTenantInStore: a tenant whose deletion Slurm
// refused stays in the store (Deleting) while the other deleted tenant,
// whose objects are gone, is dropped; the guard keeps nothing of the
// refused one it did not hold.
func TestFailedDeleteKeepsTenantInStore(t *testing.T) {
	cl := &reconciletest.Cluster{}
	all := teams("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "s", "t")
	mustApply(t, cl, all)
	st := &memStore{ts: deleting(all, "a", "b")}
	cl.Refuse = map[string]string{"a": "Job(s) active, cancel job(s) before remove"}
	r := &reconcile.Reconciler{Store: st, Cluster: cl, Naming: naming, Actor: "test"}
	p, ts, err := r.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Apply(context.Background(), p, ts)
	if !errors.Is(err, reconcile.ErrPartial) {
		t.Fatalf("err = %v; want ErrPartial", err)
	}
	if diff := cmp.Diff([]string{"b"}, res.Removed); diff != "" {
		t.Errorf("Removed (-want +got):\n%s", diff)
	}
	var kept []string
	for _, x := range st.ts {
		if x.Name == "a" || x.Name == "b" {
			kept = append(kept, x.Name)
		}
	}
	if diff := cmp.Diff([]string{"a"}, kept); diff != "" {
		t.Errorf("store after the apply (-want +got):\n%s", diff)
	}
	if hasAccount(t, cl, "b") {
		t.Error("b's account is still in Slurm")
	}
	delete(cl.Refuse, "a")
	p, ts, _ = r.Plan(context.Background())
	if res, err := r.Apply(context.Background(), p, ts); err != nil || len(res.Removed) != 1 || res.Removed[0] != "a" {
		t.Errorf("retry: removed %v, err %v", res.Removed, err)
	}
}

func hasAccount(t *testing.T, cl *reconciletest.Cluster, name string) bool {
	t.Helper()
	st, err := cl.ReadState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range st.Accounts {
		if a.Name == name {
			return true
		}
	}
	return false
}

func hasAssoc(t *testing.T, cl *reconciletest.Cluster, account string) bool {
	t.Helper()
	st, err := cl.ReadState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range st.Assocs {
		if a.Account == account {
			return true
		}
	}
	return false
}

var _ = tenant.Tenant{}

// TestDeleteTwoTenantsSharingAUser: two tenants share sam, who has no
// other association; deleting both succeeds in one apply (Slurm refuses to
// remove sam's default association while sam keeps the other, error 7009,
// so sam's associations go in one request before the accounts), both are
// dropped from the store, and the next plan is empty.
func TestDeleteTwoTenantsSharingAUser(t *testing.T) {
	cl := &reconciletest.Cluster{}
	a := tenant.Tenant{Name: "a", Users: []string{"sam", "u1"}, GPUs: tenant.Quota{"h100": 1}, State: tenant.Active}
	b := tenant.Tenant{Name: "b", Users: []string{"sam", "u2"}, GPUs: tenant.Quota{"h100": 1}, State: tenant.Active}
	mustApply(t, cl, []tenant.Tenant{a, b, team("c")})
	st := &memStore{ts: deleting([]tenant.Tenant{a, b, team("c")}, "a", "b")}
	r := &reconcile.Reconciler{Store: st, Cluster: cl, Naming: naming, Actor: "test"}
	if err := r.Run(context.Background()); err != nil {
		t.Fatalf("delete of two tenants sharing sam: %v", err)
	}
	if len(st.ts) != 1 || st.ts[0].Name != "c" {
		t.Errorf("store after the delete: %v; want only c", st.ts)
	}
	p, _ := reconcile.Compute(context.Background(), cl, st.ts, naming)
	if !p.Empty() {
		t.Errorf("left after the delete: %v", lines(p))
	}
}
