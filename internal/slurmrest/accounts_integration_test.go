//go:build integration

package slurmrest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestIntegrationSetAccounts runs SetAccounts against the real testbed,
// once per supported data_parser version (object names it-sa44-*,
// it-sa43-*).
func TestIntegrationSetAccounts(t *testing.T) {
	env := testbed.Require(t)
	for _, v := range Supported {
		t.Run(v, func(t *testing.T) {
			c := itClient(t, env, v)
			p := "it-sa" + strings.TrimPrefix(v, "v0.0.")
			t.Run("SetAccounts", func(t *testing.T) { itSetAccounts(t, env, c, p) })
			t.Run("PostAccountsCreates", func(t *testing.T) { itPostAccountsCreates(t, env, c, p) })
		})
	}
}

func sacctmgr(t *testing.T, env testbed.Env, args ...string) string {
	t.Helper()
	return strings.TrimSpace(env.Exec(t, "", append([]string{"sacctmgr", "-n", "-P", "show"}, args...)...))
}

func itSetAccounts(t *testing.T, env testbed.Env, c *Client, p string) {
	acct, missing, u1 := p+"-a", p+"-missing", p+"-u1"
	x := ctx(t)
	itRemove(t, c, itObjects{accounts: []string{acct, missing}, users: []string{u1}})

	if err := c.CreateAccounts(x, []AccountSpec{{Name: acct, Description: "it before", Organization: "it-org"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateUsers(x, []UserSpec{{Name: u1, DefaultAccount: acct}}); err != nil {
		t.Fatal(err)
	}
	if err := c.AddCoordinators(x, acct, []string{u1}); err != nil {
		t.Fatal(err)
	}

	// New description and organization, the same coordinator list: one write.
	before := c.Stats()
	if err := c.SetAccounts(x, []Account{{Name: acct, Description: "it after", Organization: "it-org2", Coordinators: []string{u1}}}); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Writes-before.Writes != 1 || st.Reads-before.Reads != 1 {
		t.Errorf("SetAccounts: stats %+v -> %+v, want one read and one write", before, st)
	}
	if got, want := sacctmgr(t, env, "account", acct, "format=account,descr,org"), acct+"|it after|it-org2"; got != want {
		t.Errorf("sacctmgr show account = %q, want %q", got, want)
	}
	if got, want := sacctmgr(t, env, "user", u1, "withcoord", "format=user,coord"), u1+"|"+acct; got != want {
		t.Errorf("sacctmgr coordinators = %q, want %q (the coordinator must remain)", got, want)
	}
	a, err := c.GetAccount(x, acct)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Account{Name: acct, Description: "it after", Organization: "it-org2", Coordinators: []string{u1}}, a); diff != "" {
		t.Errorf("GetAccount after SetAccounts (-want +got):\n%s", diff)
	}
	// The cluster association is untouched.
	if got := sacctmgr(t, env, "assoc", "account="+acct, "user=", "format=cluster,account,user"); got != "testbed|"+acct+"|" {
		t.Errorf("association after SetAccounts: %q", got)
	}

	// The list is the whole list: leaving the coordinator out removes it.
	if err := c.SetAccounts(x, []Account{{Name: acct, Description: "it after", Organization: "it-org2"}}); err != nil {
		t.Fatal(err)
	}
	if got := sacctmgr(t, env, "user", u1, "withcoord", "format=user,coord"); got != u1+"|" {
		t.Errorf("coordinators after SetAccounts without them = %q, want none", got)
	}

	// A missing account is refused and not created; nothing is written.
	before = c.Stats()
	err = c.SetAccounts(x, []Account{{Name: acct, Description: "it after"}, {Name: missing, Description: "d"}})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), missing) {
		t.Errorf("SetAccounts with a missing account: %v, want ErrNotFound naming %s", err, missing)
	}
	if w := c.Stats().Writes - before.Writes; w != 0 {
		t.Errorf("%d writes for a refused SetAccounts", w)
	}
	if got := sacctmgr(t, env, "account", missing, "format=account"); got != "" {
		t.Errorf("refused SetAccounts created %q", got)
	}

	// Empty input: no request.
	before = c.Stats()
	if err := c.SetAccounts(x, nil); err != nil || c.Stats() != before {
		t.Errorf("SetAccounts(nil) = %v, stats %+v -> %+v", err, before, c.Stats())
	}
}

// itPostAccountsCreates pins why SetAccounts checks existence first: POST
// accounts/ with an unknown name creates the account, with no association
// on any cluster.
func itPostAccountsCreates(t *testing.T, env testbed.Env, c *Client, p string) {
	name := p + "-bare"
	x := ctx(t)
	itRemove(t, c, itObjects{accounts: []string{name}})
	if err := c.postAccounts(x, []Account{{Name: name, Description: "d", Organization: "o"}}); err != nil {
		t.Fatal(err)
	}
	if got := sacctmgr(t, env, "account", name, "format=account,descr,org"); got != name+"|d|o" {
		t.Errorf("account after POST accounts/: %q", got)
	}
	if got := sacctmgr(t, env, "assoc", "account="+name, "format=cluster,account,user"); got != "" {
		t.Errorf("POST accounts/ made associations: %q", got)
	}
	accts, err := c.ListAccounts(x)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(accts, func(a Account) bool { return a.Name == name }) {
		t.Errorf("%s not listed", name)
	}
}
