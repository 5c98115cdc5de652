package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/reconcile/reconciletest"
	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// team is a tenant with two users.
func team(name string) tenant.Tenant {
	return tenant.Tenant{Name: name, Users: []string{name + "u1", name + "u2"}, GPUs: tenant.Quota{"h100": 1}, State: tenant.Active}
}

func teams(names ...string) []tenant.Tenant {
	var ts []tenant.Tenant
	for _, n := range names {
		ts = append(ts, team(n))
	}
	return ts
}

func deleting(ts []tenant.Tenant, names ...string) []tenant.Tenant {
	out := make([]tenant.Tenant, len(ts))
	for i, t := range ts {
		out[i] = t.Clone()
		for _, n := range names {
			if t.Name == n {
				out[i].State = tenant.Deleting
			}
		}
	}
	return out
}

func numbered(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("t%02d", i))
	}
	return out
}

// TestDeletePolicy: the mass-delete rule. An empty, foreign or stale store
// never deletes without the flag; a small site still deletes one tenant
// per run; the last tenant and large shares need the flag.
func TestDeletePolicy(t *testing.T) {
	three := teams("acme", "globex", "hooli")
	thirty := teams(numbered(30)...)
	cases := map[string]struct {
		applied []tenant.Tenant // made in Slurm first (by the real store)
		store   []tenant.Tenant // then plan for this store
		share   float64
		reason  string   // "" when allowed
		tenants []string // MassDelete.Tenants when refused
	}{
		"empty store deletes nothing": {
			applied: three, store: nil, share: 0.10,
			reason: reconcile.ReasonUnrecorded, tenants: []string{"acme", "globex", "hooli"},
		},
		"foreign store (other tenants)": {
			applied: three, store: teams("initech"), share: 0.10,
			reason: reconcile.ReasonUnrecorded, tenants: []string{"acme", "globex", "hooli"},
		},
		"stale store (one tenant missing) deletes nothing": {
			applied: three, store: teams("acme", "globex"), share: 0.50,
			reason: reconcile.ReasonUnrecorded, tenants: []string{"hooli"},
		},
		"one of three deleted by an admin": {
			applied: three, store: deleting(three, "hooli"), share: 0.10,
		},
		"two of three at once": {
			applied: three, store: deleting(three, "globex", "hooli"), share: 0.10,
			reason: reconcile.ReasonShare, tenants: []string{"globex", "hooli"},
		},
		"two of three within a larger share": {
			applied: three, store: deleting(three, "globex", "hooli"), share: 0.70,
		},
		"the last tenant": {
			applied: teams("acme"), store: deleting(teams("acme"), "acme"), share: 0.10,
			reason: reconcile.ReasonAll, tenants: []string{"acme"},
		},
		"all three even with share 1": {
			applied: three, store: deleting(three, "acme", "globex", "hooli"), share: 1,
			reason: reconcile.ReasonAll, tenants: []string{"acme", "globex", "hooli"},
		},
		"three of thirty at 10%": {
			applied: thirty, store: deleting(thirty, "t00", "t01", "t02"), share: 0.10,
		},
		"four of thirty at 10%": {
			applied: thirty, store: deleting(thirty, "t00", "t01", "t02", "t03"), share: 0.10,
			reason: reconcile.ReasonShare, tenants: []string{"t00", "t01", "t02", "t03"},
		},
		"one user leaves": {
			applied: three, store: []tenant.Tenant{with(team("acme"), func(t *tenant.Tenant) { t.Users = t.Users[:1] }), team("globex"), team("hooli")},
			share: 0.10,
		},
		"every user leaves (stale store)": {
			applied: three, store: []tenant.Tenant{{Name: "acme", State: tenant.Active}, {Name: "globex", State: tenant.Active}, {Name: "hooli", State: tenant.Active}},
			share: 0.10, reason: reconcile.ReasonShare,
		},
		"nothing deleted": {applied: three, store: three, share: 0},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			cl := &reconciletest.Cluster{}
			mustApply(t, cl, c.applied)
			for _, allow := range []bool{false, true} {
				pol := &reconcile.DeletePolicy{MaxShare: c.share, Allow: allow}
				p, err := reconcile.ComputeWith(context.Background(), cl, c.store, naming, reconcile.Options{Deletes: pol})
				if err != nil {
					t.Fatal(err)
				}
				if c.reason == "" {
					if p.MassDelete != nil {
						t.Fatalf("allow=%v: refused: %s", allow, p.MassDelete.Message)
					}
					continue
				}
				if p.MassDelete == nil {
					t.Fatalf("allow=%v: not refused; want %s\nplan: %v", allow, c.reason, lines(p))
				}
				if p.MassDelete.Reason != c.reason {
					t.Errorf("allow=%v: reason %s (%s); want %s", allow, p.MassDelete.Reason, p.MassDelete.Message, c.reason)
				}
				if c.tenants != nil {
					if diff := cmp.Diff(c.tenants, p.MassDelete.Tenants); diff != "" {
						t.Errorf("tenants (-want +got):\n%s", diff)
					}
				}
				if allow {
					if !p.MassDelete.Allowed || p.Err() != nil {
						t.Errorf("with --allow-mass-delete: allowed=%v err=%v", p.MassDelete.Allowed, p.Err())
					}
					continue
				}
				if err := p.Err(); !errors.Is(err, reconcile.ErrMassDelete) || !strings.Contains(err.Error(), "those deletions were held back") {
					t.Errorf("Err() = %v; want ErrMassDelete saying the deletions are held back", err)
				}
				for _, ch := range p.Changes {
					if ch.Action == reconcile.Delete && !ch.HeldBack {
						t.Errorf("deletion not held back: %s", ch)
					}
				}
				before, _ := cl.ReadState(context.Background())
				err = reconcile.Apply(context.Background(), cl, p)
				if !errors.Is(err, reconcile.ErrMassDelete) || !strings.Contains(err.Error(), "held back, everything else was applied") {
					t.Errorf("Apply of a refused plan: err=%v; want ErrMassDelete saying what was held back", err)
				}
				after, _ := cl.ReadState(context.Background())
				if gone := lost(before, after); len(gone) > 0 {
					t.Errorf("Apply of a refused plan deleted %v", gone)
				}
			}
		})
	}
}

// TestDeletePolicyUnrecordedQOS: a gpubridge QOS left by an earlier QOS
// prefix belongs to no tenant the store records: its deletion is refused.
func TestDeletePolicyUnrecordedQOS(t *testing.T) {
	cl := &reconciletest.Cluster{}
	mustApply(t, cl, teams("acme"))
	prefixed := tenant.Naming{QOSPrefix: "q-", OnDemandQOS: "ondemand"}
	p, err := reconcile.ComputeWith(context.Background(), cl, teams("acme"), prefixed, reconcile.Options{Deletes: &reconcile.DeletePolicy{MaxShare: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	if p.MassDelete == nil || p.MassDelete.Reason != reconcile.ReasonUnrecorded || fmt.Sprint(p.MassDelete.Unrecorded) != "[qos acme]" {
		t.Fatalf("mass delete = %+v; want unrecorded [qos acme]\nplan: %v", p.MassDelete, lines(p))
	}
}

// TestDeletePolicyWaitsDoNotCount: a removal waiting for jobs deletes
// nothing, so it neither counts nor hides the others.
func TestDeletePolicyWaitsDoNotCount(t *testing.T) {
	cl := &reconciletest.Cluster{}
	three := teams("acme", "globex", "hooli")
	mustApply(t, cl, three)
	cl.Jobs = []reconcile.JobCount{{Account: "globex", User: "globexu1", Running: 1}}
	p, err := reconcile.ComputeWith(context.Background(), cl, deleting(three, "globex", "hooli"), naming, reconcile.Options{Deletes: &reconcile.DeletePolicy{MaxShare: 0.1}})
	if err != nil {
		t.Fatal(err)
	}
	if p.MassDelete != nil || len(p.Waiting) != 1 {
		t.Fatalf("mass delete %+v, waiting %v; want none and globex waiting", p.MassDelete, p.Waiting)
	}
}

// lost lists the accounts, user associations and QOS of before that
// after lacks.
func lost(before, after reconcile.State) []string {
	var out []string
	has := map[string]bool{}
	for _, a := range after.Accounts {
		has["account "+a.Name] = true
	}
	for _, a := range after.Assocs {
		has["user "+a.Key()] = true
	}
	for _, q := range after.QOS {
		has["qos "+q.Name] = true
	}
	for _, a := range before.Accounts {
		if !has["account "+a.Name] {
			out = append(out, "account "+a.Name)
		}
	}
	for _, a := range before.Assocs {
		if !has["user "+a.Key()] {
			out = append(out, "user "+a.Key())
		}
	}
	for _, q := range before.QOS {
		if !has["qos "+q.Name] {
			out = append(out, "qos "+q.Name)
		}
	}
	return out
}

// TestMassDeleteHoldsBackOnlyDeletions: a plan refused for deleting too
// many tenants still creates the new tenant and changes the quota of
// another; only the deletions wait (and the next plan shows them).
func TestMassDeleteHoldsBackOnlyDeletions(t *testing.T) {
	cl := &reconciletest.Cluster{}
	thirty := teams(numbered(30)...)
	mustApply(t, cl, thirty)
	store := deleting(thirty, "t00", "t01", "t02", "t03", "t04")
	store[10].GPUs = tenant.Quota{"h100": 3}
	store = append(store, team("newco"))
	p, err := reconcile.ComputeWith(context.Background(), cl, store, naming, reconcile.Options{Deletes: &reconcile.DeletePolicy{MaxShare: 0.1}})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Refused() || p.MassDelete.HeldBack == 0 {
		t.Fatalf("plan not refused: %+v", p.MassDelete)
	}
	err = reconcile.Apply(context.Background(), cl, p)
	if !errors.Is(err, reconcile.ErrMassDelete) {
		t.Fatalf("Apply: %v; want ErrMassDelete", err)
	}
	if q, ok := cl.QOS("newco"); !ok {
		t.Error("the new tenant was not created")
	} else if q.GrpTRES["gres/gpu:h100"] != 1 {
		t.Errorf("newco GrpTRES %v", q.GrpTRES)
	}
	if q, _ := cl.QOS("t10"); q.GrpTRES["gres/gpu:h100"] != 3 {
		t.Errorf("t10's quota change was held back too: %v", q.GrpTRES)
	}
	next, _ := reconcile.ComputeWith(context.Background(), cl, store, naming, reconcile.Options{Deletes: &reconcile.DeletePolicy{MaxShare: 0.1}})
	for _, ch := range next.Changes {
		if ch.Action != reconcile.Delete {
			t.Errorf("left after the apply: %s; want only the held-back deletions", ch)
		}
	}
	if _, ok := cl.QOS("t00"); !ok {
		t.Error("t00 was deleted although the deletions were refused")
	}
}
