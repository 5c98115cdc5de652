package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/internal/app"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/reconcile/reconciletest"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
)

// noBackends makes the CLI find neither slurmrestd nor a database.
func noBackends(t *testing.T) {
	t.Setenv("GPUBRIDGE_CONFIG", "")
	for _, k := range []string{"GPUBRIDGE_SLURMREST_JWT_KEY", "GPUBRIDGE_SLURMREST_TOKEN", "GPUBRIDGE_DB_DSN"} {
		t.Setenv(k, "")
	}
}

// TestBadTenantInputOffline: without slurmrestd or the store, bad input is
// still refused with every field problem at once, exit status 2.
func TestBadTenantInputOffline(t *testing.T) {
	noBackends(t)
	cases := map[string]struct {
		args []string
		want []string
	}{
		"name and quota": {
			args: []string{"add", "tenant", "a;b", "gpus=h100:-1,1g.10gb:abc", "users=alice,B0b"},
			want: []string{
				"4 problem(s), nothing was changed",
				`name: "a;b" is not a valid name`,
				"gpus.h100: -1 is negative",
				`gpus.1g.10gb: "abc" is not a whole number`,
				`users[1]: "B0b" has upper-case letters`,
				"GPU types not checked",
			},
		},
		"unknown option": {args: []string{"add", "tenant", "acme", "quota=4"}, want: []string{`unknown option "quota"`}},
		"two names":      {args: []string{"add", "tenant", "acme", "globex"}, want: []string{"add tenant takes one name"}},
		"user name":      {args: []string{"add", "user", "$(id)", "tenant=acme"}, want: []string{"user: \"$(id)\" is not a valid user name"}},
		"import name":    {args: []string{"import", "a'b"}, want: []string{`bad character "'"`}},
		"no set":         {args: []string{"modify", "tenant", "acme", "gpus=h100:2"}, want: []string{"no key=value options are accepted here"}},
		"format column":  {args: []string{"show", "tenants", "format=name,quota"}, want: []string{`format: unknown column "quota"`}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(append([]string{"-i"}, c.args...), strings.NewReader(""), &out, &errb)
			if code != 2 {
				t.Errorf("exit %d; want 2\nstderr: %s", code, errb.String())
			}
			for _, w := range c.want {
				if !strings.Contains(errb.String(), w) {
					t.Errorf("stderr:\n%s\nwant %q", errb.String(), w)
				}
			}
		})
	}
}

func TestPrintPlan(t *testing.T) {
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
	(&App{Env: &app.Env{}}).printPlan(&b, p, []storeChange{{Action: tenantstore.ActionModify, Tenant: "acme", Changes: []tenant.FieldChange{{Title: "GPUs", Old: "h100:2", New: "h100:3"}}}})
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
	(&App{Env: &app.Env{}}).printPlan(&b, &reconcile.Plan{}, nil)
	if b.String() != "No changes: Slurm matches the tenants.\n" {
		t.Errorf("empty plan: %q", b.String())
	}
}

// TestPrintPlanHeldBack: a plan whose deletions the delete policy refused
// marks them held back, counts only what is applied, and says so
// (docs/tenants.md, "Mass deletions", shows this output).
func TestPrintPlanHeldBack(t *testing.T) {
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
	store := []tenant.Tenant{ts[0], team("speech", "dave"), team("vision", "carol"), team("newco", "erin")}
	store[1].State, store[2].State = tenant.Deleting, tenant.Deleting
	p, err = reconcile.ComputeWith(context.Background(), cl, store, naming, reconcile.Options{Deletes: &reconcile.DeletePolicy{MaxShare: 0.1}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	(&App{Env: &app.Env{}}).printPlan(&b, p, nil)
	want := `+ qos newco  GrpTRES=gres/gpu:h100=1
+ account newco  parent=root Description="gpubridge: tenant" Organization=gpubridge
+ user erin (newco)  QOS=newco,ondemand DefaultQOS=newco
- user dave (speech)  (held back: mass deletion refused)
- user carol (vision)  (held back: mass deletion refused)
- account speech  (held back: mass deletion refused)
- account vision  (held back: mass deletion refused)
- qos speech  (held back: mass deletion refused)
- qos vision  (held back: mass deletion refused)
! mass deletion refused: the plan deletes the Slurm objects of 2 of 3 tenants (speech, vision), more than reconcile.maxDeleteShare=0.1 allows in one run (1); those deletions are held back, everything else is applied. Run ` + "`gpubridge apply --allow-mass-delete`" + ` to delete them at once
6 change(s) held back: the plan deletes more than a store may (share; see docs/tenants.md, "Mass deletions"); the rest is applied.
Plan: 3 to create, 0 to modify, 0 to delete in Slurm.
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestAuditSummary(t *testing.T) {
	s := func(v string) *string { return &v }
	cases := map[string]struct {
		kind          string
		before, after *string
		want          string
	}{
		"create": {kind: "tenant", after: s(`{"name":"acme","gpus":{"h100":2},"users":["alice"],"state":"active"}`), want: "GPUs=h100:2 Users=alice State=active"},
		"modify": {kind: "tenant", before: s(`{"name":"acme","gpus":{"h100":2}}`), after: s(`{"name":"acme","gpus":{"h100":3}}`), want: "GPUs h100:2 -> h100:3"},
		"remove": {kind: "tenant", before: s(`{"name":"acme"}`), want: "removed"},
		"other":  {kind: "ratecard", before: s(`1`), after: s(`2`), want: "1 -> 2"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := auditSummary(c.kind, c.before, c.after); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestTenantHelpNamesBookingKeys: add/modify tenant --help list the
// booking.* keys they accept.
func TestTenantHelpNamesBookingKeys(t *testing.T) {
	noBackends(t)
	for _, verb := range []string{"add", "modify"} {
		var out, errb bytes.Buffer
		if code := run([]string{verb, "tenant", "--help"}, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("%s tenant --help: exit %d %s", verb, code, errb.String())
		}
		for _, k := range []string{"booking.maxgpus=", "booking.maxwindow=", "booking.minlead=", "booking.maxhorizon=", "booking.spendlimit="} {
			if !strings.Contains(out.String(), k) {
				t.Errorf("%s tenant --help does not mention %s:\n%s", verb, k, out.String())
			}
		}
	}
}
