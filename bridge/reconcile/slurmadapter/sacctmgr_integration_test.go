//go:build integration

package slurmadapter

import (
	"context"
	"fmt"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/internal/sacctmgr"
	"github.com/gpubridge/gpubridge/internal/slurmrest/slurmresttest"
)

// TestIntegrationSacctmgrBulk: 30 tenants x 2 users applied with
// reconcile.sacctmgr set, through the testbed's real sacctmgr: a user in
// two tenants, and a user who exists already (under a site account)
// joining one. The new associations and users are loaded (sacctmgr
// commands, no POST users/ or associations/), the accounts keep their own
// mixed-case descriptions, every user's default account is right (the
// no-op plan is empty), and the state equals what slurmrestd alone makes
// of the same tenants. Deleting them all goes through sacctmgr too
// (accounts with their associations, QOS) and leaves nothing. A second
// run with a sacctmgr that always fails writes everything through
// slurmrestd and ends the same.
func TestIntegrationSacctmgrBulk(t *testing.T) {
	env, c, db := bulkTestbed(t)
	ctx := context.Background()
	const pre = "s13sm"
	naming := tenant.Naming{QOSPrefix: "", OnDemandQOS: "ondemand"}
	var ts []tenant.Tenant
	objs := slurmresttest.Objects{Accounts: []string{pre + "site"}, Users: []string{pre + "old", pre + "both"}}
	for i := range 30 {
		n := fmt.Sprintf("%s%02d", pre, i)
		users := []string{n + "a", n + "b"}
		switch i {
		case 3, 17:
			users = append(users, pre+"both") // one new user in two tenants
		case 5:
			users = append(users, pre+"old") // an existing user joins
		}
		ts = append(ts, tenant.Tenant{Name: n, Description: fmt.Sprintf("Team %d, GPU Research (R&D)", i), Organization: fmt.Sprintf("Physics Dept %d", i),
			Users: users, GPUs: tenant.Quota{"h100": 1}, State: tenant.Active})
		objs.Accounts = append(objs.Accounts, n)
		objs.Users = append(objs.Users, n+"a", n+"b")
		objs.QOS = append(objs.QOS, n)
	}
	cleanupQuiet(t, c, objs)
	env.Exec(t, "", "sacctmgr", "-i", "add", "account", pre+"site", "description=site account")
	env.Exec(t, "", "sacctmgr", "-i", "add", "user", pre+"old", "account="+pre+"site")
	scope := func(n string) bool { return strings.HasPrefix(n, pre) && n != pre+"site" }

	run := func(t *testing.T, argv []string, wantCommands bool) reconcile.State {
		r := &sacctmgr.Runner{Argv: argv, Cluster: env.Cluster}
		ad := New(c).ReadAssociationsFrom(AssocDB{DB: db}, nil).WithSacctmgr(r, 10, nil)
		p, err := reconcile.ComputeScoped(ctx, ad, ts, naming, scope)
		if err != nil {
			t.Fatal(err)
		}
		s0 := c.Stats()
		if err := reconcile.Apply(ctx, ad, p); err != nil {
			t.Fatalf("cold apply: %v", err)
		}
		if cmds := r.Commands(); wantCommands && (cmds == 0 || c.Stats().Writes-s0.Writes > 4) {
			t.Errorf("cold apply: %d sacctmgr commands, %d REST writes; want the associations loaded (REST: QOS, accounts and the accounts' QOS only)", cmds, c.Stats().Writes-s0.Writes)
		}
		again, err := reconcile.ComputeScoped(ctx, ad, ts, naming, scope)
		if err != nil {
			t.Fatal(err)
		}
		if !again.Empty() {
			t.Errorf("after the cold apply: %d changes: %v", len(again.Changes), again.Changes[:min(5, len(again.Changes))])
		}
		st, err := ad.ReadState(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, a := range st.Accounts {
			if scope(a.Name) {
				got[a.Name] = tenant.Unmark(a.Description) + "|" + a.Organization
			}
		}
		for _, x := range ts {
			if want := x.Description + "|" + x.Organization; got[x.Name] != want {
				t.Errorf("account %s: %q, want %q", x.Name, got[x.Name], want)
			}
		}
		c0 := r.Commands()
		deleteAll(t, ad, ts, naming, scope)
		if wantCommands && r.Commands()-c0 != 2 {
			t.Errorf("delete: %d sacctmgr commands; want 2 (accounts, QOS)", r.Commands()-c0)
		}
		out, err := env.Run(ctx, "", nil, "sacctmgr", "-n", "-P", "list", "assoc", "user="+pre+"old", "format=account")
		if err != nil || strings.TrimSpace(out) != pre+"site" {
			t.Errorf("%sold's associations after the delete: %q, %v; want its site account only", pre, out, err)
		}
		return scopedState(st, scope)
	}
	var loaded reconcile.State
	t.Run("sacctmgr", func(t *testing.T) { loaded = run(t, []string{env.ExecScript, "sacctmgr"}, true) })
	t.Run("failing sacctmgr falls back to slurmrestd", func(t *testing.T) {
		fell := run(t, []string{"false"}, false)
		byName := cmpopts.SortSlices(func(a, b reconcile.Account) bool { return a.Name < b.Name })
		byKey := cmpopts.SortSlices(func(a, b reconcile.Assoc) bool { return a.Account+"/"+a.User < b.Account+"/"+b.User })
		if len(loaded.Assocs) != 63 {
			t.Errorf("%d associations were loaded; want 63 (30 x 2, both twice, old once)", len(loaded.Assocs))
		}
		if diff := cmp.Diff(fell, loaded, byName, byKey, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("state written through sacctmgr differs from slurmrestd's (-rest +sacctmgr):\n%s", diff)
		}
	})
}

// scopedState is st's accounts and associations in scope.
func scopedState(st reconcile.State, scope func(string) bool) reconcile.State {
	var out reconcile.State
	for _, a := range st.Accounts {
		if scope(a.Name) {
			out.Accounts = append(out.Accounts, a)
		}
	}
	out.Assocs = scopedAssocs(st, scope)
	return out
}
