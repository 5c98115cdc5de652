package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
// never deletes without the flag; deletions a person recorded (delete
// tenant) are not counted: a small site deletes one tenant, two, and its
// last, without the flag; a store that lost users' records still does not
// remove them all.
func TestDeletePolicy(t *testing.T) {
	three := teams("acme", "globex", "hooli")
	thirty := teams(numbered(30)...)
	cases := map[string]struct {
		applied []tenant.Tenant // made in Slurm first (by the real store)
		store   []tenant.Tenant // then plan for this store
		share   float64
		reason  string   // "" when allowed
		tenants []string // MassDelete.Held when refused
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
		},
		"two of three within a larger share": {
			applied: three, store: deleting(three, "globex", "hooli"), share: 0.70,
		},
		"the last tenant": {
			applied: teams("acme"), store: deleting(teams("acme"), "acme"), share: 0.10,
		},
		"all three, each recorded": {
			applied: three, store: deleting(three, "acme", "globex", "hooli"), share: 0,
		},
		"three of thirty at 10%": {
			applied: thirty, store: deleting(thirty, "t00", "t01", "t02"), share: 0.10,
		},
		"four of thirty at 10%, recorded": {
			applied: thirty, store: deleting(thirty, "t00", "t01", "t02", "t03"), share: 0.10,
		},
		"one recorded, one unrecorded": {
			applied: three, store: deleting(teams("acme", "globex"), "globex"), share: 0.10,
			reason: reconcile.ReasonUnrecorded, tenants: []string{"hooli"},
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
					if diff := cmp.Diff(c.tenants, p.MassDelete.Held); diff != "" {
						t.Errorf("held tenants (-want +got):\n%s", diff)
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
					if ch.Action == reconcile.Delete && ch.HeldBack != ofHeld(ch.Name, p.MassDelete) {
						t.Errorf("deletion held back %v; held tenants %v, held associations %v: %s", ch.HeldBack, p.MassDelete.Held, p.MassDelete.HeldAssocs, ch)
					}
				}
				before, _ := cl.ReadState(context.Background())
				err = reconcile.Apply(context.Background(), cl, p)
				if !errors.Is(err, reconcile.ErrMassDelete) || !strings.Contains(err.Error(), "held back, everything else was applied") {
					t.Errorf("Apply of a refused plan: err=%v; want ErrMassDelete saying what was held back", err)
				}
				after, _ := cl.ReadState(context.Background())
				for _, gone := range lost(before, after) {
					if ofHeld(strings.SplitN(gone, " ", 2)[1], p.MassDelete) {
						t.Errorf("Apply of a refused plan deleted %v", gone)
					}
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

// ofHeld reports whether a plan line's object ("acme", "alice (acme)")
// belongs to what the refusal holds back.
func ofHeld(name string, m *reconcile.MassDelete) bool {
	if user, acct, ok := strings.Cut(name, " ("); ok && user != "" {
		acct = strings.TrimSuffix(acct, ")")
		return slices.Contains(m.Held, acct) || m.HeldAssocs && !slices.Contains(m.Tenants, acct)
	}
	return slices.Contains(m.Held, name)
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

// TestMassDeleteHoldsBackOnlyDeletions: a plan refused for deleting
// unrecorded tenants still creates the new tenant, changes the quota of
// another, applies the deletion a person recorded and removes a user who
// left a recorded tenant; only the unrecorded tenants' deletions wait
// (and the next plan shows only them). Before issue 25 (item 7) one
// unrecorded tenant held back every deletion of every reconcile.
func TestMassDeleteHoldsBackOnlyDeletions(t *testing.T) {
	cl := &reconciletest.Cluster{}
	thirty := teams(numbered(30)...)
	mustApply(t, cl, thirty)
	store := deleting(thirty[2:], "t05")    // t00 and t01 unrecorded; t05 deleted by a person
	store[8].GPUs = tenant.Quota{"h100": 3} // t10
	store[9].Users = store[9].Users[:1]     // t11u2 leaves
	store = append(store, team("newco"))
	pol := reconcile.Options{Deletes: &reconcile.DeletePolicy{MaxShare: 0.1}}
	p, err := reconcile.ComputeWith(context.Background(), cl, store, naming, pol)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Refused() || p.MassDelete.Reason != reconcile.ReasonUnrecorded || fmt.Sprint(p.MassDelete.Held) != "[t00 t01]" {
		t.Fatalf("plan not refused for t00 and t01 alone: %+v", p.MassDelete)
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
	if _, ok := cl.QOS("t05"); ok {
		t.Error("t05, deleted by a person, was held back by the unrecorded tenants")
	}
	if fmt.Sprint(p.Removed) != "[t05]" {
		t.Errorf("removed %v; want [t05]", p.Removed)
	}
	st, _ := cl.ReadState(context.Background())
	for _, a := range st.Assocs {
		if a.Key() == "t11u2 (t11)" {
			t.Error("the user who left t11 is still there: held back by the unrecorded tenants")
		}
	}
	next, _ := reconcile.ComputeWith(context.Background(), cl, deleting(store, "t05")[:len(store)], naming, pol)
	for _, ch := range next.Changes {
		if ch.Action != reconcile.Delete || !ch.HeldBack || !strings.Contains(ch.Name, "t00") && !strings.Contains(ch.Name, "t01") {
			t.Errorf("left after the apply: %s; want only t00's and t01's held-back deletions", ch)
		}
	}
	for _, n := range []string{"t00", "t01"} {
		if _, ok := cl.QOS(n); !ok {
			t.Errorf("%s was deleted although its deletion was refused", n)
		}
	}
}
