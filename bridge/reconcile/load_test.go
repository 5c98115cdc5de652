package reconcile_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/reconcile/reconciletest"
	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// TestApplyWithLoader: with an AssocLoader, a cold apply creates the new
// users together with their associations in one load (no CreateUsers, no
// PutAssocs), and ends in the same cluster as the writer without one; a
// later apply loads a new tenant's associations, of an existing user and
// of a new user (with its record), while an existing user joining an
// existing tenant goes to PutAssocs.
func TestApplyWithLoader(t *testing.T) {
	ctx := context.Background()
	ts := teams(numbered(12)...)
	plain := &reconciletest.Cluster{}
	mustApply(t, plain, ts)
	l := &reconciletest.Loading{Cluster: &reconciletest.Cluster{}}
	applyConverges(t, l, ts)
	if l.Loads != 1 || l.Loaded != 24 {
		t.Errorf("%d loads of %d associations; want 1 of 24 (12 tenants x 2 users)", l.Loads, l.Loaded)
	}
	want, _ := plain.ReadState(ctx)
	got, _ := l.ReadState(ctx)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("state after a loaded apply differs from a plain one (-plain +loaded):\n%s", diff)
	}

	// t00u1 joins t01 (existing user, existing account: PutAssocs); a
	// new tenant "fresh" gets t02u1 (existing user) and "newbie" (a new
	// user whose default is fresh).
	next := teams(append(numbered(12), "fresh")...)
	for i := range next {
		switch next[i].Name {
		case "t01":
			next[i].Users = append(next[i].Users, "t00u1")
		case "fresh":
			next[i].Users = []string{"t02u1", "newbie"}
			next[i].Admins = nil
		}
	}
	l.Loads, l.Loaded = 0, 0
	applyConverges(t, l, next)
	if l.Loads != 1 || l.Loaded != 2 {
		t.Errorf("%d loads of %d associations; want 1 of 2 (fresh's two users)", l.Loads, l.Loaded)
	}
	if d := l.DefaultAccount("newbie"); d != "fresh" {
		t.Errorf("newbie's default account = %q, want fresh", d)
	}
	if d := l.DefaultAccount("t02u1"); d != "t02" {
		t.Errorf("t02u1's default account = %q, want t02 (kept)", d)
	}
}

// applyConverges plans and applies ts on c, and checks that the next plan
// is empty.
func applyConverges(t *testing.T, c reconcile.Cluster, ts []tenant.Tenant) {
	t.Helper()
	ctx := context.Background()
	p, err := reconcile.Compute(ctx, c, ts, naming)
	if err != nil {
		t.Fatal(err)
	}
	if err := reconcile.Apply(ctx, c, p); err != nil {
		t.Fatal(err)
	}
	if again, _ := reconcile.Compute(ctx, c, ts, naming); !again.Empty() {
		t.Errorf("after the apply: %v", lines(again))
	}
}

// TestLoaderRefusalIsIsolated: a load that Slurm refuses is narrowed down
// to the refused tenant as any batch is; the others are created.
func TestLoaderRefusalIsIsolated(t *testing.T) {
	ctx := context.Background()
	names := numbered(16)
	bad := names[9]
	l := &reconciletest.Loading{Cluster: &reconciletest.Cluster{Refuse: map[string]string{bad + "u2": "Invalid user name"}}}
	p, err := reconcile.Compute(ctx, l, teams(names...), naming)
	if err != nil {
		t.Fatal(err)
	}
	out, err := reconcile.ApplyOutcome(ctx, l, p)
	if err != nil {
		t.Fatal(err)
	}
	want := []reconcile.Failure{{Tenant: bad, Step: "create user associations and users", Objects: []string{bad + "u1", bad + "u2"}, Error: "fake: LoadAssocs refused: Invalid user name"}}
	if diff := cmp.Diff(want, out.Failed); diff != "" {
		t.Errorf("Failed (-want +got):\n%s", diff)
	}
	for _, n := range names {
		if got := l.DefaultAccount(n + "u1"); (got == n) != (n != bad) {
			t.Errorf("%su1's default account = %q", n, got)
		}
	}
}

// TestApplyWithAccountDropper: with an AccountDropper, the user
// associations of deleted accounts go with the accounts (no
// DeleteAssocs for them), while a user removed from a tenant that stays
// is still deleted on its own.
func TestApplyWithAccountDropper(t *testing.T) {
	ctx := context.Background()
	names := numbered(6)
	l := &reconciletest.Loading{Cluster: &reconciletest.Cluster{}}
	apply := func(ts []tenant.Tenant) { t.Helper(); applyConverges(t, l, ts) }
	apply(teams(names...))

	mixed := deleting(teams(names...), "t00")
	mixed[1].Users = mixed[1].Users[:1] // t01 loses t01u2
	apply(mixed)
	if hasAccount(t, l.Cluster, "t00") || hasAssoc(t, l.Cluster, "t00") {
		t.Error("t00 or its associations are left")
	}
	st, _ := l.ReadState(ctx)
	for _, a := range st.Assocs {
		if a.User == "t01u2" {
			t.Errorf("t01u2's association with %s is left", a.Account)
		}
	}

	l.FailOn = "DeleteAssocs" // deleting whole tenants must not need it
	apply(deleting(teams(names[1:]...), names[1:]...))
	if st, _ := l.ReadState(ctx); len(st.Assocs) != 0 || len(st.Accounts) != 0 {
		t.Errorf("left after deleting every tenant: %d accounts, %d associations", len(st.Accounts), len(st.Assocs))
	}
}
