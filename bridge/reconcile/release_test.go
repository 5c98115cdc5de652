package reconcile_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/reconcile/reconciletest"
	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// adoptedPhysics is a site's account physics (its own description, user
// zed with QOS normal, coordinator zed; siteqos makes a QOS physics exist
// too) imported and applied with a user (amy, an admin) and a quota added
// by gpubridge. It returns the cluster and the tenant as stored.
func adoptedPhysics(t *testing.T, siteQOS bool) (*reconciletest.Cluster, tenant.Tenant) {
	t.Helper()
	cl := &reconciletest.Cluster{}
	var qos []tenant.QOS
	if siteQOS {
		qos = []tenant.QOS{{Name: "physics", Description: "site physics qos", GrpTRES: tenant.TRES{"cpu": 64}}}
	}
	cl.Seed(qos,
		[]reconcile.Account{{Account: tenant.Account{Name: "physics", Description: "Physics dept", Organization: "uni"}, Clustered: true, Coordinators: []string{"zed"}}},
		[]tenant.Assoc{{Account: "physics", User: "zed", QOS: []string{"normal"}, DefaultQOS: "normal"}})
	st, _ := cl.ReadState(context.Background())
	ts, _, err := reconcile.Import(st, []string{"physics"}, naming)
	if err != nil {
		t.Fatal(err)
	}
	tn := ts[0]
	tn.Users = append(tn.Users, "amy")
	tn.Admins = append(tn.Admins, "amy")
	tn.Description = "Physics (gpubridge)"
	tn.GPUs = tenant.Quota{"h100": 2}
	tn.Normalize()
	mustApply(t, cl, []tenant.Tenant{tn})
	if p, _ := reconcile.Compute(context.Background(), cl, []tenant.Tenant{tn}, naming); !p.Empty() {
		t.Fatalf("adopted tenant does not converge: %v", lines(p))
	}
	return cl, tn
}

func inState(t tenant.Tenant, s tenant.State) tenant.Tenant {
	t = t.Clone()
	t.State = s
	return t
}

func TestReleasePlan(t *testing.T) {
	cases := map[string]struct {
		siteQOS bool
		state   tenant.State
		want    []string
	}{
		"release removes gpubridge's objects and restores the site's": {
			state: tenant.Releasing,
			want: []string{
				`~ account physics  Description "Physics (gpubridge)" -> "Physics dept"`,
				"+ coordinator zed (physics)",
				"~ user zed (physics)  QOS ondemand,physics -> normal",
				"~ user zed (physics)  DefaultQOS physics -> normal",
				"- user amy (physics)",
				"- qos physics",
			},
		},
		"release keeps a QOS that existed, with its description and limits": {
			siteQOS: true, state: tenant.Releasing,
			want: []string{
				`~ qos physics  Description "gpubridge: quota of tenant physics" -> "site physics qos"`,
				"~ qos physics  GrpTRES cpu=64,gres/gpu:h100=2 -> cpu=64",
				"~ qos physics  MaxSubmitJobsPerUser 0 -> (none)",
				`~ account physics  Description "Physics (gpubridge)" -> "Physics dept"`,
				"+ coordinator zed (physics)",
				"~ user zed (physics)  QOS ondemand,physics -> normal",
				"~ user zed (physics)  DefaultQOS physics -> normal",
				"- user amy (physics)",
			},
		},
		"purge deletes everything": {
			state: tenant.Deleting,
			want: []string{
				"- user amy (physics)",
				"- user zed (physics)",
				"- account physics",
				"- qos physics",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cl, tn := adoptedPhysics(t, tc.siteQOS)
			del := inState(tn, tc.state)
			// The first apply blocks new submissions while a job of
			// gpubridge's user runs; once it ended, the next one finishes.
			cl.Jobs = []reconcile.JobCount{{Account: "physics", User: "amy", QOS: "physics", Running: 1}}
			mustApply(t, cl, []tenant.Tenant{del})
			if q, _ := cl.QOS("physics"); !q.SubmitBlocked {
				t.Fatal("a tenant being deleted is not blocked")
			}
			cl.Jobs = nil
			p, err := reconcile.Compute(context.Background(), cl, []tenant.Tenant{del}, naming)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, lines(p)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if !slices.Equal(p.Removed, []string{"physics"}) {
				t.Errorf("removed = %v", p.Removed)
			}
			if got, want := slices.Equal(p.Released, []string{"physics"}), tc.state == tenant.Releasing; got != want {
				t.Errorf("released = %v, want release %v", p.Released, want)
			}
			if err := reconcile.Apply(context.Background(), cl, p); err != nil {
				t.Fatal(err)
			}
			st, _ := cl.ReadState(context.Background())
			var acct *reconcile.Account
			for _, a := range st.Accounts {
				if a.Name == "physics" {
					acct = &a
				}
			}
			var assocs []tenant.Assoc
			for _, a := range st.Assocs {
				if a.Account == "physics" {
					assocs = append(assocs, a.Assoc)
				}
			}
			q, hasQOS := cl.QOS("physics")
			if tc.state == tenant.Deleting {
				if acct != nil || len(assocs) > 0 || hasQOS {
					t.Errorf("purge left account %v, associations %v, QOS %v", acct, assocs, hasQOS)
				}
				return
			}
			if acct == nil {
				t.Fatal("release deleted the site's account")
			}
			if acct.Description != "Physics dept" || acct.Organization != "uni" || !slices.Equal(acct.Coordinators, []string{"zed"}) {
				t.Errorf("site account after release: %+v", acct)
			}
			if want := []tenant.Assoc{{Account: "physics", User: "zed", QOS: []string{"normal"}, DefaultQOS: "normal"}}; !cmp.Equal(want, assocs) {
				t.Errorf("associations after release: %+v, want %+v", assocs, want)
			}
			if tc.siteQOS != hasQOS {
				t.Errorf("QOS physics exists after release: %v, want %v", hasQOS, tc.siteQOS)
			}
			if hasQOS && (q.Description != "site physics qos" || q.GrpTRES.String() != "cpu=64" || q.SubmitBlocked) {
				t.Errorf("site QOS after release: %+v", q)
			}
			// The store drops the tenant: nothing is left to change.
			if p, _ := reconcile.Compute(context.Background(), cl, nil, naming); !p.Empty() {
				t.Errorf("after release, a plan without the tenant changes: %v", lines(p))
			}
		})
	}
}

// Releasing waits for the jobs of gpubridge's users and QOS, never for
// the site's own users' jobs in the site's own QOS.
func TestReleaseWaitsForGpubridgeJobsOnly(t *testing.T) {
	cases := map[string]struct {
		job  reconcile.JobCount
		wait bool
	}{
		"site user, site QOS":           {reconcile.JobCount{Account: "physics", User: "zed", QOS: "normal", Running: 1}, false},
		"site user, the tenant QOS":     {reconcile.JobCount{Account: "physics", User: "zed", QOS: "physics", Running: 1}, true},
		"site user, the on-demand QOS":  {reconcile.JobCount{Account: "physics", User: "zed", QOS: "ondemand", Pending: 1}, true},
		"site user, QOS not known":      {reconcile.JobCount{Account: "physics", User: "zed", Running: 1}, true},
		"gpubridge's user, any QOS":     {reconcile.JobCount{Account: "physics", User: "amy", QOS: "normal", Running: 1}, true},
		"another account's job":         {reconcile.JobCount{Account: "other", User: "amy", QOS: "physics", Running: 1}, false},
		"purge waits for every job too": {reconcile.JobCount{Account: "physics", User: "zed", QOS: "normal", Running: 1}, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cl, tn := adoptedPhysics(t, false)
			cl.Jobs = []reconcile.JobCount{tc.job}
			state := tenant.Releasing
			if name == "purge waits for every job too" {
				state = tenant.Deleting
			}
			p, err := reconcile.Compute(context.Background(), cl, []tenant.Tenant{inState(tn, state)}, naming)
			if err != nil {
				t.Fatal(err)
			}
			waiting := len(p.Waiting) > 0
			if waiting != tc.wait || waiting == (len(p.Removed) > 0) {
				t.Fatalf("waiting %v (want %v), removed %v: %v", waiting, tc.wait, p.Removed, lines(p))
			}
			if waiting {
				// Waiting: gpubridge's objects stay, new jobs are blocked.
				for _, c := range p.Changes {
					if c.Action == reconcile.Delete {
						t.Errorf("deletes while waiting: %s", c)
					}
				}
			}
		})
	}
}

// A release a person recorded (`delete tenant` of an adopted tenant) is
// not a mass deletion, even of the only tenant: its deletions are applied,
// what it restores too. (Before issue 25 it was refused as "all".)
func TestReleaseCountedByDeletePolicy(t *testing.T) {
	cl, tn := adoptedPhysics(t, false)
	st, _ := cl.ReadState(context.Background())
	pol := &reconcile.DeletePolicy{MaxShare: 0.5}
	p := reconcile.Diff(reconcile.Input{Tenants: []tenant.Tenant{inState(tn, tenant.Releasing)}, Naming: naming, State: st, JobsRead: true, Deletes: pol})
	if p.MassDelete != nil {
		t.Fatalf("releasing the only tenant is refused: %+v", p.MassDelete)
	}
	for _, c := range p.Changes {
		if c.HeldBack {
			t.Errorf("held back: %s", c)
		}
	}
	if fmt.Sprint(p.Released) != "["+tn.Name+"]" {
		t.Errorf("released %v", p.Released)
	}
}
