//go:build integration

package slurmadapter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/slurmrest/slurmresttest"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestIntegrationBulkApply: 40 tenants x 2 users, each with its own
// description and organization, applied through the real slurmrestd in
// few writes (QOS, accounts' read + POST accounts/ + accounts_association/,
// users, associations); every account carries its own description; the
// QOS and associations read from slurmdbd's database equal (the whole
// cluster's QOS, the test's associations) those read by REST; the
// no-op plan is empty with 0 writes; deleting them all leaves nothing.
func TestIntegrationBulkApply(t *testing.T) {
	_, c, db := bulkTestbed(t)
	ctx := context.Background()
	const pre = "s13bk"
	naming := tenant.Naming{QOSPrefix: "", OnDemandQOS: "ondemand"}
	var ts []tenant.Tenant
	var objs slurmresttest.Objects
	for i := range 40 {
		n := fmt.Sprintf("%s%02d", pre, i)
		ts = append(ts, tenant.Tenant{Name: n, Description: fmt.Sprintf("team %d of the bulk test", i), Organization: fmt.Sprintf("org %d", i),
			Users: []string{n + "a", n + "b"}, GPUs: tenant.Quota{"h100": 1}, State: tenant.Active})
		objs.Accounts = append(objs.Accounts, n)
		objs.Users = append(objs.Users, n+"a", n+"b")
		objs.QOS = append(objs.QOS, n)
	}
	cleanupQuiet(t, c, objs)
	ad := New(c).ReadAssociationsFrom(AssocDB{DB: db}, nil)
	scope := func(n string) bool { return strings.HasPrefix(n, pre) }

	p, err := reconcile.ComputeScoped(ctx, ad, ts, naming, scope)
	if err != nil {
		t.Fatal(err)
	}
	s0 := c.Stats()
	if err := reconcile.Apply(ctx, ad, p); err != nil {
		t.Fatalf("cold apply: %v", err)
	}
	s1 := c.Stats()
	if w := s1.Writes - s0.Writes; w > 6 {
		t.Errorf("cold apply of 40 tenants: %d writes; want at most 6 (one per kind of object, two for accounts, one for the accounts' QOS)", w)
	}
	accts, err := c.ListAccounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range accts {
		if scope(a.Name) {
			if !tenant.IsMarked(a.Description) {
				t.Errorf("account %s: description %q lacks gpubridge's marker", a.Name, a.Description)
			}
			got[a.Name] = tenant.Unmark(a.Description) + "|" + a.Organization
		}
	}
	want := map[string]string{}
	for _, x := range ts {
		want[x.Name] = x.Description + "|" + x.Organization
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("accounts' descriptions|organizations (-want +got):\n%s", diff)
	}

	// The database read equals the REST read.
	stDB, err := ad.ReadState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stREST, err := New(c).ReadState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(scopedAssocs(stREST, scope), scopedAssocs(stDB, scope)); diff != "" {
		t.Errorf("associations read from the database differ from REST's (-rest +db):\n%s", diff)
	}
	if diff := cmp.Diff(stREST.QOS, stDB.QOS, cmpopts.SortSlices(func(a, b tenant.QOS) bool { return a.Name < b.Name }), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("QOS read from the database differ from REST's (-rest +db):\n%s", diff)
	}

	again, err := reconcile.ComputeScoped(ctx, ad, ts, naming, scope)
	if err != nil {
		t.Fatal(err)
	}
	s2 := c.Stats()
	if err := reconcile.Apply(ctx, ad, again); err != nil {
		t.Fatal(err)
	}
	if !again.Empty() || c.Stats().Writes != s2.Writes {
		t.Errorf("no-op: %d changes, %d writes; want 0 and 0", len(again.Changes), c.Stats().Writes-s2.Writes)
	}

	deleteAll(t, ad, ts, naming, scope)
}

// deleteAll deletes the tenants ts through cl (a plan and an apply of
// them all in the deleting state) and checks that nothing of them is left.
func deleteAll(t *testing.T, cl reconcile.Cluster, ts []tenant.Tenant, naming tenant.Naming, scope func(string) bool) {
	t.Helper()
	ctx := context.Background()
	var gone []tenant.Tenant
	for _, x := range ts {
		x = x.Clone()
		x.State = tenant.Deleting
		gone = append(gone, x)
	}
	del, err := reconcile.ComputeScoped(ctx, cl, gone, naming, scope)
	if err != nil {
		t.Fatal(err)
	}
	if err := reconcile.Apply(ctx, cl, del); err != nil {
		t.Fatalf("delete: %v", err)
	}
	left, err := reconcile.ComputeScoped(ctx, cl, nil, naming, scope)
	if err != nil {
		t.Fatal(err)
	}
	if !left.Empty() {
		t.Errorf("after deleting all: %d changes left: %v", len(left.Changes), left.Changes[:min(5, len(left.Changes))])
	}
}

// TestIntegrationBulkErrorShort: a bulk write of 300 user associations of
// which one (in the first request of 250) names a QOS that does not exist
// is refused by slurmrestd; the error is short, says nothing of the
// request was written, and nothing was (the second request is not sent).
func TestIntegrationBulkErrorShort(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	c := slurmresttest.New(t, env, "", nil)
	const acct = "s13be"
	cleanupQuiet(t, c, slurmresttest.Objects{Accounts: []string{acct}})
	if err := c.CreateAccounts(ctx, []slurmrest.AccountSpec{{Name: acct, Description: "bulk error test"}}); err != nil {
		t.Fatal(err)
	}
	var specs []slurmrest.AssociationSpec
	for i := range 300 {
		s := slurmrest.AssociationSpec{Account: acct, User: fmt.Sprintf("%s%03d", acct, i), QOS: []string{"normal"}}
		if i == 137 {
			s.QOS = []string{"s13benosuchqos"}
		}
		specs = append(specs, s)
	}
	err := c.SetAssociations(ctx, specs)
	if err == nil {
		t.Fatal("SetAssociations with an unknown QOS: no error")
	}
	var be *slurmrest.BulkError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v (%T); want a *slurmrest.BulkError", err, err)
	}
	t.Logf("error (%d bytes): %v", len(err.Error()), err)
	if len(err.Error()) > 1200 {
		t.Errorf("error is %d bytes; want it short", len(err.Error()))
	}
	if !strings.Contains(err.Error(), "set associations (250 object(s) in one request)") || !strings.Contains(err.Error(), "nothing of this request was written") {
		t.Errorf("error: %v", err)
	}
	as, err := c.ListAssociations(ctx, slurmrest.AssociationFilter{Clusters: []string{c.Cluster()}, Accounts: []string{acct}})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if a.User != "" {
			t.Errorf("association %s/%s exists although the request was refused", a.Account, a.User)
		}
	}
}

// bulkTestbed is the testbed with a slurmrestd client of generous timeout,
// slurmdbd's database, and the shared on-demand QOS (never removed).
func bulkTestbed(t *testing.T) (testbed.Env, *slurmrest.Client, *sqlx.DB) {
	t.Helper()
	env := testbed.Require(t)
	c := slurmresttest.New(t, env, "", func(o *slurmrest.Options) { o.Timeout = 2 * time.Minute })
	db, err := sqlx.Open("mysql", env.SlurmDBDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	_, _ = env.Run(context.Background(), "", nil, "sacctmgr", "-i", "add", "qos", "ondemand")
	return env, c, db
}

func scopedAssocs(st reconcile.State, scope func(string) bool) []reconcile.Assoc {
	var out []reconcile.Assoc
	for _, a := range st.Assocs {
		if scope(a.Account) {
			out = append(out, a)
		}
	}
	return out
}

// cleanupQuiet removes objs (those that exist) now and when the test
// ends.
func cleanupQuiet(t *testing.T, c *slurmrest.Client, objs slurmresttest.Objects) {
	rm := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		_ = c.DeleteAccounts(ctx, objs.Accounts)
		for _, u := range objs.Users {
			_ = c.DeleteUser(ctx, u)
		}
		_ = c.DeleteQOSNames(ctx, objs.QOS)
	}
	rm()
	t.Cleanup(rm)
}

// TestIntegrationColdApplyRESTDefaultTimeout (issue 25 item 9): a cold
// apply of 1,000 tenants x 3 users through slurmrestd alone (no
// reconcile.sacctmgr, associations read by REST) with the client's default
// timeout (10 s) succeeds: each bulk request carries at most 250 objects.
// Before, POST users/ of 3,000 users got "no complete answer within 10s"
// on a loaded machine. GPUBRIDGE_BULK_TENANTS sets the size (default
// 1000); the wall time and the machine's load are logged.
func TestIntegrationColdApplyRESTDefaultTimeout(t *testing.T) {
	env := testbed.Require(t)
	n := 1000
	if v := os.Getenv("GPUBRIDGE_BULK_TENANTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("GPUBRIDGE_BULK_TENANTS=%q: want a positive number", v)
		}
	}
	c := slurmresttest.New(t, env, "", func(o *slurmrest.Options) { o.Timeout = 0 }) // the default
	ctx := context.Background()
	_, _ = env.Run(ctx, "", nil, "sacctmgr", "-i", "add", "qos", "ondemand")
	const pre = "s25cd"
	naming := tenant.Naming{QOSPrefix: "", OnDemandQOS: "ondemand"}
	var ts []tenant.Tenant
	var objs slurmresttest.Objects
	for i := range n {
		name := fmt.Sprintf("%s%04d", pre, i)
		users := []string{name + "a", name + "b", name + "c"}
		ts = append(ts, tenant.Tenant{Name: name, Description: fmt.Sprintf("team %d", i), Organization: fmt.Sprintf("org %d", i),
			Users: users, GPUs: tenant.Quota{"h100": 1}, State: tenant.Active})
		objs.Accounts = append(objs.Accounts, name)
		objs.Users = append(objs.Users, users...)
		objs.QOS = append(objs.QOS, name)
	}
	cleanupQuiet(t, c, objs)
	ad := New(c)
	scope := func(s string) bool { return strings.HasPrefix(s, pre) }
	load := func() string {
		b, _ := os.ReadFile("/proc/loadavg")
		return strings.TrimSpace(string(b))
	}
	t.Logf("load before: %s", load())
	t0 := time.Now()
	p, err := reconcile.ComputeScoped(ctx, ad, ts, naming, scope)
	if err != nil {
		t.Fatal(err)
	}
	s0 := c.Stats()
	if err := reconcile.Apply(ctx, ad, p); err != nil {
		t.Fatalf("cold apply of %d tenants x 3 users with the default timeout: %v", n, err)
	}
	t.Logf("cold apply of %d tenants x 3 users through slurmrestd, default timeout: %.1f s, %d writes; load after: %s",
		n, time.Since(t0).Seconds(), c.Stats().Writes-s0.Writes, load())
	again, err := reconcile.ComputeScoped(ctx, ad, ts, naming, scope)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Empty() {
		t.Errorf("plan after the cold apply: %d changes: %v", len(again.Changes), again.Changes[:min(5, len(again.Changes))])
	}
	t1 := time.Now()
	deleteAll(t, ad, ts, naming, scope)
	t.Logf("delete of %d tenants: %.1f s; load after: %s", n, time.Since(t1).Seconds(), load())
}
