package view

import (
	"bytes"
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/reconcile/reconciletest"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantadmin"
)

func TestPlan(t *testing.T) {
	p := &reconcile.Plan{
		Changes: []reconcile.Change{
			{Action: reconcile.Create, Kind: reconcile.KindAccount, Name: "acme", Detail: "parent=root"},
			{Action: reconcile.Modify, Kind: reconcile.KindQOS, Name: "acme", Field: "GrpTRES", Old: "gres/gpu:h100=2", New: "gres/gpu:h100=3"},
			{Action: reconcile.Delete, Kind: reconcile.KindUser, Name: "carol (acme)"},
		},
		Waiting: []reconcile.Wait{{Kind: "account", Name: "old", Running: 1, Reason: "tenant is being deleted; new submissions are blocked"}},
		Removed: []string{"gone"},
	}
	var b bytes.Buffer
	Plan(&b, p, []tenantadmin.StoreChange{{Action: tenantadmin.ActionModify, Tenant: "acme", Changes: []tenant.FieldChange{{Title: "GPUs", Old: "h100:2", New: "h100:3"}}}})
	want := `~ tenant acme  GPUs h100:2 -> h100:3  (store)
+ account acme  parent=root
~ qos acme  GrpTRES gres/gpu:h100=2 -> gres/gpu:h100=3
- user carol (acme)
! account old  waiting for 1 running and 0 pending job(s) to end: tenant is being deleted; new submissions are blocked
- tenant gone  (deletion finished: dropped from the store)
Plan: 1 to create, 1 to modify, 1 to delete in Slurm; 1 removal(s) waiting for jobs.
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	b.Reset()
	Plan(&b, &reconcile.Plan{}, nil)
	if b.String() != "No changes: Slurm matches the tenants.\n" {
		t.Errorf("empty plan: %q", b.String())
	}
}

// TestPlanHeldBack: a plan whose deletions the delete policy refused
// marks them held back (only those: a person's recorded deletion and a
// user leaving another tenant are applied), counts only what is applied,
// and says so
// (docs/tenants.md, "Mass deletions", shows this output).
func TestPlanHeldBack(t *testing.T) {
	naming := tenant.Naming{OnDemandQOS: "ondemand"}
	team := func(n string, users ...string) tenant.Tenant {
		return tenant.Tenant{Name: n, Users: users, GPUs: tenant.Quota{"h100": 1}, State: tenant.Active}
	}
	cl := &reconciletest.Cluster{}
	ts := []tenant.Tenant{team("mlteam", "alice"), team("speech", "dave"), team("vision", "carol")}
	p, err := reconcile.Compute(context.Background(), cl, ts, naming)
	if err != nil {
		t.Fatal(err)
	}
	if err := reconcile.Apply(context.Background(), cl, p); err != nil {
		t.Fatal(err)
	}
	// speech deleted by a person (applied); vision unknown to the store
	// (held back); a user leaves mlteam (applied).
	store := []tenant.Tenant{team("mlteam"), team("speech", "dave"), team("newco", "erin")}
	store[1].State = tenant.Deleting
	p, err = reconcile.ComputeWith(context.Background(), cl, store, naming, reconcile.Options{Deletes: &reconcile.DeletePolicy{MaxShare: 0.1}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	Plan(&b, p, nil)
	want := `+ qos newco  GrpTRES=gres/gpu:h100=1
+ account newco  parent=root Description="gpubridge: tenant" Organization=gpubridge QOS=newco,ondemand DefaultQOS=newco
+ user erin (newco)  QOS=newco,ondemand DefaultQOS=newco
- user alice (mlteam)
- user dave (speech)
- user carol (vision)  (held back: mass deletion refused)
- account speech
- account vision  (held back: mass deletion refused)
- qos speech
- qos vision  (held back: mass deletion refused)
- tenant speech  (deletion finished: dropped from the store)
! mass deletion refused: the plan deletes the Slurm objects of 1 tenant(s) that gpubridge's store has no record of (vision); those deletions are held back, everything else is applied. Is the database empty, restored from an old backup, or another site's? Recover them with ` + "`gpubridge import --marked`" + `, or delete them with ` + "`gpubridge apply --allow-mass-delete`" + `
3 change(s) held back: the plan deletes more than a store may (unrecorded; see docs/tenants.md, "Mass deletions"); the rest is applied.
Plan: 3 to create, 0 to modify, 4 to delete in Slurm.
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestPlanReleased: a released tenant (adopted, deleted without --purge)
// is dropped with the site's account left in place, and says so.
func TestPlanReleased(t *testing.T) {
	var b bytes.Buffer
	Plan(&b, &reconcile.Plan{Removed: []string{"site", "gone"}, Released: []string{"site"}}, nil)
	want := `- tenant site  (release finished: dropped from the store; the site's account and its original users stay)
- tenant gone  (deletion finished: dropped from the store)
Plan: 0 to create, 0 to modify, 0 to delete in Slurm.
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
