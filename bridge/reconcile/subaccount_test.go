package reconcile_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/reconcile/reconciletest"
	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// TestAccountCarriesTenantQOS: a tenant account's own association carries
// the tenant's QOS list and default (issue 25: a sub-account or a user
// association without its own QOS inherited normal from it, outside the
// quota); a change behind gpubridge's back is drift, repaired by apply;
// admins are not made coordinators.
func TestAccountCarriesTenantQOS(t *testing.T) {
	ctx := context.Background()
	cl := &reconciletest.Cluster{}
	mustApply(t, cl, []tenant.Tenant{acme()})
	st, _ := cl.ReadState(ctx)
	i := slices.IndexFunc(st.Accounts, func(a reconcile.Account) bool { return a.Name == "acme" })
	if i < 0 {
		t.Fatal("no account acme")
	}
	a := st.Accounts[i]
	if !slices.Equal(a.QOS, []string{"acme", "ondemand"}) || a.DefaultQOS != "acme" || len(a.Coordinators) != 0 {
		t.Fatalf("account acme: QOS %v default %q coordinators %v; want [acme ondemand], acme, none", a.QOS, a.DefaultQOS, a.Coordinators)
	}
	// Drift: the account's association set back to normal.
	cl.Seed(nil, nil, []tenant.Assoc{{Account: "acme", QOS: []string{"normal"}, DefaultQOS: "normal"}})
	p, err := reconcile.Compute(ctx, cl, []tenant.Tenant{acme()}, naming)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"~ account acme  QOS normal -> acme,ondemand", "~ account acme  DefaultQOS normal -> acme"}
	if diff := cmp.Diff(want, lines(p)); diff != "" {
		t.Errorf("plan after drift (-want +got):\n%s", diff)
	}
	if err := reconcile.Apply(ctx, cl, p); err != nil {
		t.Fatal(err)
	}
	if again, _ := reconcile.Compute(ctx, cl, []tenant.Tenant{acme()}, naming); !again.Empty() {
		t.Errorf("plan after repair: %v", lines(again))
	}
}

// TestSubAccountRemoved: an account a coordinator added under a tenant's
// account (and its users' associations) is reported and removed once its
// jobs end, also while an unrecorded tenant holds back that tenant's own
// deletions (issue 25 items 1 and 7); a sub-account of an adopted
// tenant's account (the site's hierarchy) is left alone.
func TestSubAccountRemoved(t *testing.T) {
	ctx := context.Background()
	cl := &reconciletest.Cluster{}
	mustApply(t, cl, []tenant.Tenant{acme(), team("globex"), team("stale")})
	cl.Seed(nil, []reconcile.Account{
		{Account: tenant.Account{Name: "acmesub", Description: "x", Organization: "x"}, Clustered: true, Parent: "acme"},
		{Account: tenant.Account{Name: "acmesubsub", Description: "x", Organization: "x"}, Clustered: true, Parent: "acmesub"},
		{Account: tenant.Account{Name: "other", Description: "x", Organization: "x"}, Clustered: true, Parent: "root"},
	}, []tenant.Assoc{
		{Account: "acmesub", User: "mallory", QOS: []string{"normal"}, DefaultQOS: "normal"},
		{Account: "acmesubsub", User: "mallory"},
		{Account: "other", User: "mallory"},
	})
	store := []tenant.Tenant{acme(), team("globex")} // "stale" is unrecorded: its deletion is refused
	cl.Jobs = []reconcile.JobCount{{Account: "acmesub", User: "mallory", Running: 1}}
	pol := reconcile.Options{Deletes: &reconcile.DeletePolicy{MaxShare: 0.1}}
	p, err := reconcile.ComputeWith(ctx, cl, store, naming, pol)
	if err != nil {
		t.Fatal(err)
	}
	if p.SubAccounts["acmesub"] != "acme" || p.SubAccounts["acmesubsub"] != "acme" || len(p.SubAccounts) != 2 {
		t.Errorf("sub-accounts %v; want acmesub and acmesubsub of acme", p.SubAccounts)
	}
	if len(p.Waiting) != 1 || p.Waiting[0].Name != "acmesub" {
		t.Errorf("waiting %v; want acmesub (a running job)", p.Waiting)
	}
	cl.Jobs = nil
	p, err = reconcile.ComputeWith(ctx, cl, store, naming, pol)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Refused() || p.MassDelete.Reason != reconcile.ReasonUnrecorded {
		t.Fatalf("plan not refused for the unrecorded tenant: %+v", p.MassDelete)
	}
	if err := reconcile.Apply(ctx, cl, p); !errors.Is(err, reconcile.ErrMassDelete) {
		t.Fatalf("apply: %v", err)
	}
	st, _ := cl.ReadState(ctx)
	var names []string
	for _, a := range st.Accounts {
		names = append(names, a.Name)
	}
	if want := []string{"acme", "globex", "other", "stale"}; !slices.Equal(names, want) {
		t.Errorf("accounts after apply %v; want %v (the sub-accounts removed, the unrecorded tenant held back)", names, want)
	}
	for _, a := range st.Assocs {
		if a.Account == "acmesub" || a.Account == "acmesubsub" {
			t.Errorf("association left: %s", a.Key())
		}
	}
	if cl.DefaultAccount("mallory") != "other" {
		t.Errorf("mallory's default account %q; want other", cl.DefaultAccount("mallory"))
	}

	// Under an adopted tenant's account, the site's sub-accounts stay.
	site := &reconciletest.Cluster{}
	site.Seed(nil, []reconcile.Account{
		{Account: tenant.Account{Name: "physics", Description: "Physics", Organization: "uni"}, Clustered: true},
		{Account: tenant.Account{Name: "physicslab", Description: "lab", Organization: "uni"}, Clustered: true, Parent: "physics"},
	}, nil)
	adopted := tenant.Tenant{Name: "physics", Description: "Physics", Organization: "uni", Adopted: true, State: tenant.Active, GPUs: tenant.Quota{"h100": 1}}
	p, err = reconcile.Compute(ctx, site, []tenant.Tenant{adopted}, naming)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Changes {
		if c.Name == "physicslab" {
			t.Errorf("the adopted tenant's sub-account is touched: %s", c)
		}
	}
}

// TestMarkedSubAccountOnce: a gpubridge-marked account under a tenant's
// account (no tenant wants it) is deleted once, as the unrecorded tenant it
// looks like, not also as a sub-account.
func TestMarkedSubAccountOnce(t *testing.T) {
	ctx := context.Background()
	cl := &reconciletest.Cluster{}
	mustApply(t, cl, []tenant.Tenant{acme()})
	cl.Seed(nil, []reconcile.Account{{Account: tenant.Account{Name: "ghost", Description: "gpubridge: old", Organization: "x"}, Clustered: true, Parent: "acme"}}, nil)
	p, err := reconcile.ComputeWith(ctx, cl, []tenant.Tenant{acme()}, naming, reconcile.Options{Deletes: &reconcile.DeletePolicy{MaxShare: 0.5, Allow: true}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"- account ghost"}, lines(p)); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	if p.MassDelete == nil || p.MassDelete.Reason != reconcile.ReasonUnrecorded || len(p.SubAccounts) != 0 {
		t.Errorf("mass delete %+v, sub-accounts %v; want ghost unrecorded, no sub-account", p.MassDelete, p.SubAccounts)
	}
}
