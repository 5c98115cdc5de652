package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/reconcile/reconciletest"
	"github.com/gpubridge/gpubridge/bridge/tenant"
)

var naming = tenant.Naming{QOSPrefix: "", OnDemandQOS: "ondemand"}

func acme() tenant.Tenant {
	return tenant.Tenant{Name: "acme", Description: "Acme ML", Users: []string{"alice", "bob"}, Admins: []string{"alice"},
		GPUs: tenant.Quota{"h100": 2, "1g.10gb": 2}, State: tenant.Active}
}

func lines(p *reconcile.Plan) []string {
	var out []string
	for _, c := range p.Changes {
		out = append(out, c.String())
	}
	for _, w := range p.Waiting {
		out = append(out, w.String())
	}
	return out
}

func mustApply(t *testing.T, c *reconciletest.Cluster, ts []tenant.Tenant) *reconcile.Plan {
	t.Helper()
	p, err := reconcile.Compute(context.Background(), c, ts, naming)
	if err != nil {
		t.Fatal(err)
	}
	if err := reconcile.Apply(context.Background(), c, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlanLines(t *testing.T) {
	withJobs := func(j ...reconcile.JobCount) func(*reconciletest.Cluster) {
		return func(c *reconciletest.Cluster) { c.Jobs = j }
	}
	cases := map[string]struct {
		before []tenant.Tenant              // applied first
		setup  func(*reconciletest.Cluster) // then this happens
		now    []tenant.Tenant              // then plan for these
		want   []string                     // plan lines
		err    string                       // substring of Plan.Err
	}{
		"create from nothing": {
			now: []tenant.Tenant{acme()},
			want: []string{
				"+ qos acme  GrpTRES=gres/gpu:1g.10gb=2,gres/gpu:h100=2",
				"+ qos ondemand  shared on-demand QOS",
				`+ account acme  parent=root Description="gpubridge: Acme ML" Organization=gpubridge QOS=acme,ondemand DefaultQOS=acme`,
				"+ user alice (acme)  QOS=acme,ondemand DefaultQOS=acme",
				"+ user bob (acme)  QOS=acme,ondemand DefaultQOS=acme",
			},
		},
		"nothing to do": {before: []tenant.Tenant{acme()}, now: []tenant.Tenant{acme()}},
		"grow a quota": {
			before: []tenant.Tenant{acme()},
			now:    []tenant.Tenant{with(acme(), func(t *tenant.Tenant) { t.GPUs["h100"] = 3 })},
			want:   []string{"~ qos acme  GrpTRES gres/gpu:1g.10gb=2,gres/gpu:h100=2 -> gres/gpu:1g.10gb=2,gres/gpu:h100=3"},
		},
		"drift is one line": {
			before: []tenant.Tenant{acme()},
			setup: func(c *reconciletest.Cluster) {
				c.SetGrpTRES("acme", tenant.TRES{"gres/gpu:h100": 5, "gres/gpu:1g.10gb": 2})
			},
			now:  []tenant.Tenant{acme()},
			want: []string{"~ qos acme  GrpTRES gres/gpu:1g.10gb=2,gres/gpu:h100=5 -> gres/gpu:1g.10gb=2,gres/gpu:h100=2"},
		},
		"drop a type": {
			before: []tenant.Tenant{acme()},
			now:    []tenant.Tenant{with(acme(), func(t *tenant.Tenant) { delete(t.GPUs, "1g.10gb") })},
			want:   []string{"~ qos acme  GrpTRES gres/gpu:1g.10gb=2,gres/gpu:h100=2 -> gres/gpu:h100=2"},
		},
		"add and remove users": {
			before: []tenant.Tenant{acme()},
			now: []tenant.Tenant{with(acme(), func(t *tenant.Tenant) {
				t.Users = []string{"alice", "carol"}
			})},
			want: []string{
				"+ user carol (acme)  QOS=acme,ondemand DefaultQOS=acme",
				"- user bob (acme)",
			},
		},
		"user leaving waits for their jobs": {
			before: []tenant.Tenant{acme()},
			setup:  withJobs(reconcile.JobCount{Account: "acme", User: "bob", Running: 1}),
			now:    []tenant.Tenant{with(acme(), func(t *tenant.Tenant) { t.Users = []string{"alice"} })},
			want:   []string{"! user bob (acme)  waiting for 1 running and 0 pending job(s) to end: user leaves the tenant; the guard refuses their new jobs"},
		},
		"admin change": {
			before: []tenant.Tenant{acme()},
			now:    []tenant.Tenant{with(acme(), func(t *tenant.Tenant) { t.Admins = []string{"bob"} })},
			want:   nil, // admins are not Slurm coordinators (issue 25)
		},
		"delete tenant with jobs blocks submissions and waits": {
			before: []tenant.Tenant{acme()},
			setup:  withJobs(reconcile.JobCount{Account: "acme", User: "alice", Running: 1, Pending: 2}),
			now:    []tenant.Tenant{with(acme(), func(t *tenant.Tenant) { t.State = tenant.Deleting })},
			want: []string{
				"~ qos acme  MaxSubmitJobsPerUser (none) -> 0",
				"! account acme  waiting for 1 running and 2 pending job(s) to end: tenant is being deleted; new submissions are blocked",
			},
		},
		"delete tenant without jobs removes everything": {
			before: []tenant.Tenant{acme()},
			now:    []tenant.Tenant{with(acme(), func(t *tenant.Tenant) { t.State = tenant.Deleting })},
			want: []string{
				"- user alice (acme)",
				"- user bob (acme)",
				"- account acme",
				"- qos acme",
			},
		},
		"site objects are never touched": {
			setup: func(c *reconciletest.Cluster) {
				c.Seed([]tenant.QOS{{Name: "physics", Description: "site QOS", GrpTRES: tenant.TRES{"cpu": 10}}},
					[]reconcile.Account{{Account: tenant.Account{Name: "physics", Description: "site", Organization: "uni"}, Clustered: true, Coordinators: []string{"zed"}}},
					[]tenant.Assoc{{Account: "physics", User: "zed", QOS: []string{"normal"}, DefaultQOS: "normal"}})
			},
			now: nil,
			want: []string{
				"+ qos ondemand  shared on-demand QOS",
			},
		},
		"an unmarked account in the way is a conflict": {
			setup: func(c *reconciletest.Cluster) {
				c.Seed(nil, []reconcile.Account{{Account: tenant.Account{Name: "acme", Description: "site", Organization: "uni"}, Clustered: true}}, nil)
			},
			now: []tenant.Tenant{acme()},
			err: "account acme: exists in Slurm and was not created by gpubridge; to make the site's objects tenant acme, run `gpubridge delete tenant acme`, `gpubridge apply` (drops it from the store and leaves the site's objects alone), then `gpubridge import acme`; or rename the tenant in the store",
		},
		"an existing on-demand QOS is used as it is": {
			setup: func(c *reconciletest.Cluster) {
				c.Seed([]tenant.QOS{{Name: "ondemand", Description: "site tier", GrpTRES: tenant.TRES{"gres/gpu": 4}}}, nil, nil)
			},
			now: nil,
		},
		"losing the default account moves it": {
			before: []tenant.Tenant{acme(), {Name: "globex", Users: []string{"alice"}, State: tenant.Active}},
			now:    []tenant.Tenant{with(acme(), func(t *tenant.Tenant) { t.Users = []string{"bob"}; t.Admins = nil }), {Name: "globex", Users: []string{"alice"}, State: tenant.Active}},
			want: []string{
				"- user alice (acme)",
				"~ user alice  DefaultAccount acme -> globex",
			},
		},
		"orphaned gpubridge objects go": {
			before: []tenant.Tenant{acme(), {Name: "old", Users: []string{"carol"}, State: tenant.Active}},
			now:    []tenant.Tenant{acme()},
			want:   []string{"- user carol (old)", "- account old", "- qos old"},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			cl := &reconciletest.Cluster{}
			if c.before != nil {
				mustApply(t, cl, c.before)
			}
			if c.setup != nil {
				c.setup(cl)
			}
			p, err := reconcile.Compute(context.Background(), cl, c.now, naming)
			if err != nil {
				t.Fatal(err)
			}
			if c.err != "" {
				if err := p.Err(); err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, reconcile.ErrConflict) {
					t.Fatalf("Err() = %v, want %q", err, c.err)
				}
				cl.ResetCounts()
				if err := reconcile.Apply(context.Background(), cl, p); err == nil || cl.Writes != 0 {
					t.Errorf("Apply of a conflicting plan: err=%v writes=%d; want an error and no writes", err, cl.Writes)
				}
				return
			}
			if diff := cmp.Diff(c.want, lines(p)); diff != "" {
				t.Errorf("plan lines (-want +got):\n%s", diff)
			}
		})
	}
}

func with(t tenant.Tenant, f func(*tenant.Tenant)) tenant.Tenant {
	t = t.Clone()
	f(&t)
	return t
}

// TestApplyConverges is the reconciler's invariant: after apply, a new plan
// on the resulting state is empty, and applying it makes zero writes in at
// most three reads, whatever the change was.
func TestApplyConverges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	users := []string{"alice", "bob", "carol", "dave", "erin", "frank"}
	types := []string{"h100", "1g.10gb", "3g.40gb"}
	randomTenants := func() []tenant.Tenant {
		var ts []tenant.Tenant
		for i := range 1 + rng.IntN(5) {
			tn := tenant.Tenant{Name: fmt.Sprintf("t%d", i), State: tenant.Active}
			if rng.IntN(4) == 0 {
				tn.Description = fmt.Sprintf("team %d", rng.IntN(3))
			}
			for _, u := range users {
				if rng.IntN(3) == 0 {
					tn.Users = append(tn.Users, u)
					if rng.IntN(2) == 0 {
						tn.Admins = append(tn.Admins, u)
					}
				}
			}
			for _, ty := range types {
				if rng.IntN(2) == 0 {
					if tn.GPUs == nil {
						tn.GPUs = tenant.Quota{}
					}
					tn.GPUs[ty] = int64(rng.IntN(5))
				}
			}
			if rng.IntN(3) == 0 {
				n := int64(rng.IntN(64))
				tn.CPUs = &n
			}
			if rng.IntN(6) == 0 {
				tn.State = tenant.Deleting
			}
			tn.Normalize()
			ts = append(ts, tn)
		}
		return ts
	}
	cl := &reconciletest.Cluster{}
	for round := range 200 {
		ts := randomTenants()
		if rng.IntN(5) == 0 {
			cl.Jobs = []reconcile.JobCount{{Account: ts[0].Name, User: "alice", Running: 1}}
		} else {
			cl.Jobs = nil
		}
		if rng.IntN(4) == 0 {
			cl.SetGrpTRES(ts[0].Name, tenant.TRES{"gres/gpu:h100": 9, "node": 1})
		}
		p := mustApply(t, cl, ts)
		// The store drops the tenants whose removal was applied.
		ts = slices.DeleteFunc(ts, func(tn tenant.Tenant) bool { return slices.Contains(p.Removed, tn.Name) })
		cl.ResetCounts()
		again, err := reconcile.Compute(context.Background(), cl, ts, naming)
		if err != nil {
			t.Fatal(err)
		}
		if !again.Empty() {
			t.Fatalf("round %d: plan after apply is not empty:\n%s\nfirst plan:\n%s", round, strings.Join(lines(again), "\n"), strings.Join(lines(p), "\n"))
		}
		if err := reconcile.Apply(context.Background(), cl, again); err != nil {
			t.Fatal(err)
		}
		wantReads := 3
		if len(cl.Jobs) > 0 || len(again.Waiting) > 0 {
			wantReads = 4 // a removal is waiting for jobs: they are read each time
		}
		if cl.Writes != 0 || cl.Reads > wantReads {
			t.Fatalf("round %d: no-op apply made %d reads and %d writes; want <= %d and 0", round, cl.Reads, cl.Writes, wantReads)
		}
	}
}

// TestNoOpIsThreeReads: in the steady state (nothing being removed) a plan
// reads accounts, associations and QOS once each, and nothing else.
func TestNoOpIsThreeReads(t *testing.T) {
	cl := &reconciletest.Cluster{}
	ts := []tenant.Tenant{acme(), {Name: "globex", Users: []string{"carol"}, GPUs: tenant.Quota{"h100": 1}, State: tenant.Active}}
	mustApply(t, cl, ts)
	cl.ResetCounts()
	p := mustApply(t, cl, ts)
	if !p.Empty() || cl.Reads != 3 || cl.Writes != 0 {
		t.Errorf("no-op apply: empty=%v reads=%d writes=%d; want true, 3, 0", p.Empty(), cl.Reads, cl.Writes)
	}
}

// TestWritesAreBatched: the number of write requests does not grow with
// the number of tenants.
func TestWritesAreBatched(t *testing.T) {
	for _, n := range []int{1, 10, 500} {
		var ts []tenant.Tenant
		for i := range n {
			ts = append(ts, tenant.Tenant{Name: fmt.Sprintf("b%04d", i), Users: []string{fmt.Sprintf("u%04da", i), fmt.Sprintf("u%04db", i)},
				Admins: []string{fmt.Sprintf("u%04da", i)}, GPUs: tenant.Quota{"h100": 1}, State: tenant.Active})
		}
		cl := &reconciletest.Cluster{}
		mustApply(t, cl, ts)
		if cl.Writes != 5 {
			t.Errorf("%d tenants: cold apply made %d write batches; want 5 (QOS, accounts, users, associations, coordinators)", n, cl.Writes)
		}
	}
}

// TestShrinkNeverStopsWork: whatever a quota shrinks to, the plan only
// rewrites the QOS's GrpTRES (which gates new starts) and never deletes
// associations, accounts or QOS, which could stop running jobs.
func TestShrinkNeverStopsWork(t *testing.T) {
	for from := int64(0); from <= 4; from++ {
		for to := int64(0); to <= from; to++ {
			cl := &reconciletest.Cluster{}
			big := with(acme(), func(t *tenant.Tenant) { t.GPUs = tenant.Quota{"h100": from, "1g.10gb": from} })
			mustApply(t, cl, []tenant.Tenant{big})
			cl.Jobs = []reconcile.JobCount{{Account: "acme", User: "alice", Running: 2}}
			small := with(big, func(t *tenant.Tenant) { t.GPUs = tenant.Quota{"h100": to} })
			p, err := reconcile.Compute(context.Background(), cl, []tenant.Tenant{small}, naming)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range p.Changes {
				if c.Action != reconcile.Modify || c.Kind != reconcile.KindQOS || c.Field != "GrpTRES" {
					t.Errorf("shrink %d -> %d: unexpected change %q", from, to, c)
				}
			}
			if err := reconcile.Apply(context.Background(), cl, p); err != nil {
				t.Errorf("shrink %d -> %d with running jobs: %v", from, to, err)
			}
			q, _ := cl.QOS("acme")
			if got := q.GrpTRES.String(); got != fmt.Sprintf("gres/gpu:h100=%d", to) {
				t.Errorf("shrink %d -> %d: GrpTRES = %s", from, to, got)
			}
		}
	}
}

func TestImport(t *testing.T) {
	cl := &reconciletest.Cluster{}
	cl.Seed([]tenant.QOS{{Name: "physics", Description: "site", GrpTRES: tenant.TRES{"gres/gpu:h100": 4, "cpu": 32, "node": 2}}},
		[]reconcile.Account{{Account: tenant.Account{Name: "physics", Description: "Physics dept", Organization: "uni"}, Clustered: true, Coordinators: []string{"zed", "yan"}}},
		[]tenant.Assoc{{Account: "physics", User: "zed", QOS: []string{"normal"}, DefaultQOS: "normal"}, {Account: "physics", User: "xia", QOS: []string{"normal"}}})
	st, _ := cl.ReadState(context.Background())
	ts, notes, err := reconcile.Import(st, []string{"physics"}, naming)
	if err != nil {
		t.Fatal(err)
	}
	cpus := int64(32)
	want := []tenant.Tenant{{Name: "physics", Description: "Physics dept", Organization: "uni", Users: []string{"xia", "zed"}, Admins: []string{"zed"},
		GPUs: tenant.Quota{"h100": 4}, CPUs: &cpus, State: tenant.Active, Adopted: true,
		// What release leaves and puts back.
		Origin: &tenant.Origin{Description: "Physics dept", Organization: "uni",
			Assocs:       []tenant.OriginAssoc{{User: "xia", QOS: []string{"normal"}}, {User: "zed", QOS: []string{"normal"}, DefaultQOS: "normal"}},
			Coordinators: []string{"yan", "zed"},
			QOS:          &tenant.OriginQOS{Description: "site", GrpTRES: tenant.TRES{"gres/gpu:h100": 4, "cpu": 32, "node": 2}}}}}
	if diff := cmp.Diff(want, ts); diff != "" {
		t.Errorf("imported (-want +got):\n%s", diff)
	}
	wantNotes := []string{
		"physics: QOS physics limit GrpTRES node=2 is not a tenant quota; apply will remove it",
		"physics: coordinator yan has no association under the account; not imported as an admin (apply will remove the coordinator)",
	}
	if diff := cmp.Diff(wantNotes, notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	// The adopted tenant's objects may now be modified: apply marks them.
	p := mustApply(t, cl, ts)
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	again, _ := reconcile.Compute(context.Background(), cl, ts, naming)
	if !again.Empty() {
		t.Errorf("plan after adopting apply: %v", lines(again))
	}
	// The adopted account keeps its description; its QOS is marked.
	st2, _ := cl.ReadState(context.Background())
	for _, a := range st2.Accounts {
		if a.Name == "physics" && a.Description != "Physics dept" {
			t.Errorf("adopted account description = %q", a.Description)
		}
	}
	if q, _ := cl.QOS("physics"); !tenant.IsMarked(q.Description) {
		t.Errorf("adopted QOS description = %q; want the marker", q.Description)
	}
	// An account gpubridge created comes back as it was (store lost).
	mustApply(t, cl, append(ts, tenant.Tenant{Name: "lost", Description: "Lost team", Users: []string{"zed"}, State: tenant.Active}))
	st3, _ := cl.ReadState(context.Background())
	back, _, err := reconcile.Import(st3, []string{"lost"}, naming)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]tenant.Tenant{{Name: "lost", Description: "Lost team", Users: []string{"zed"}, State: tenant.Active}}, back); diff != "" {
		t.Errorf("re-imported gpubridge tenant (-want +got):\n%s", diff)
	}
	// Deleting an adopted tenant removes its objects although they carry no
	// marker: the store says they are gpubridge's.
	gone := ts[0].Clone()
	gone.State = tenant.Deleting
	p, _ = reconcile.Compute(context.Background(), cl, []tenant.Tenant{gone, back[0]}, naming)
	if diff := cmp.Diff([]string{"- user xia (physics)", "- user zed (physics)", "~ user zed  DefaultAccount physics -> lost", "- account physics", "- qos physics"}, lines(p)); diff != "" {
		t.Errorf("deleting an adopted tenant (-want +got):\n%s", diff)
	}
	if _, _, err := reconcile.Import(st, []string{"nosuch"}, naming); err == nil {
		t.Error("importing a missing account did not fail")
	}
}

func TestApplyStopsAtFirstFailure(t *testing.T) {
	cl := &reconciletest.Cluster{FailOn: "CreateAccounts"}
	p, err := reconcile.Compute(context.Background(), cl, []tenant.Tenant{acme()}, naming)
	if err != nil {
		t.Fatal(err)
	}
	err = reconcile.Apply(context.Background(), cl, p)
	if err == nil || !strings.Contains(err.Error(), "apply: create accounts (1): fake: CreateAccounts failed") {
		t.Fatalf("err = %v", err)
	}
	if cl.Writes != 3 {
		t.Errorf("writes = %d; want 3 (QOS, users and the failed accounts batch; nothing that needs the accounts)", cl.Writes)
	}
	cl.FailOn = ""
	mustApply(t, cl, []tenant.Tenant{acme()})
	again, _ := reconcile.Compute(context.Background(), cl, []tenant.Tenant{acme()}, naming)
	if !again.Empty() {
		t.Errorf("after recovery: %v", lines(again))
	}
}

// TestScope: a scratch store (bench, test) never removes the real store's
// tenants, only its own.
func TestScope(t *testing.T) {
	cl := &reconciletest.Cluster{}
	mustApply(t, cl, []tenant.Tenant{acme(), {Name: "benchx", Users: []string{"zoe"}, State: tenant.Active}})
	scope := func(n string) bool { return strings.HasPrefix(n, "bench") }
	p, err := reconcile.ComputeScoped(context.Background(), cl, nil, naming, scope)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"- user zoe (benchx)", "- account benchx", "- qos benchx"}
	if diff := cmp.Diff(want, lines(p)); diff != "" {
		t.Errorf("scoped plan (-want +got):\n%s", diff)
	}
}

// shuffledState reads the fake's state with its associations in a random
// order, as rows of a database without ORDER BY may come.
type shuffledState struct {
	*reconciletest.Cluster
	rng *rand.Rand
}

func (s shuffledState) ReadState(ctx context.Context) (reconcile.State, error) {
	st, err := s.Cluster.ReadState(ctx)
	s.rng.Shuffle(len(st.Assocs), func(i, j int) { st.Assocs[i], st.Assocs[j] = st.Assocs[j], st.Assocs[i] })
	return st, err
}

// The plan lists the same changes in the same order however the live state
// comes (slurmdbd's rows, or the fake's map here, in no fixed order): users
// leaving several tenants are deleted by account, then user.
func TestPlanOrderIsStable(t *testing.T) {
	c := &reconciletest.Cluster{}
	users := []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"}
	var ts []tenant.Tenant
	for _, n := range []string{"mlteam", "speech", "vision"} {
		ts = append(ts, tenant.Tenant{Name: n, Users: slices.Clone(users), GPUs: tenant.Quota{"h100": 1}, State: tenant.Active})
	}
	mustApply(t, c, ts)
	for i := range ts {
		ts[i].Users = ts[i].Users[:1] // all but alice leave
	}
	var first []string
	shuffled := shuffledState{c, rand.New(rand.NewPCG(3, 4))}
	for round := range 20 {
		p, err := reconcile.Compute(context.Background(), shuffled, ts, naming)
		if err != nil {
			t.Fatal(err)
		}
		got := lines(p)
		if round == 0 {
			first = got
			if len(first) < 21 {
				t.Fatalf("plan = %q; want the 21 users' deletions", first)
			}
			continue
		}
		if d := cmp.Diff(first, got); d != "" {
			t.Fatalf("round %d: the plan's order changed (-first +now):\n%s", round, d)
		}
	}
}
