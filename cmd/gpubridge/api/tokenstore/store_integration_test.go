//go:build integration

package tokenstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve/store/storetest"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/tokenstore"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/tokenstore/tokenstoretest"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestMariaDBConformance runs the suite on a scratch database of the
// testbed's MariaDB, and checks that adds and deletes are in the audit
// log under the token's name while the secret's hash is not.
func TestMariaDBConformance(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	sc, err := storetest.New(ctx, env.DBDSN, "gpubridge_tokit")
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	tokenstoretest.Run(t, tokenstore.New(sc.DB), "it")
	var n int
	if err := sc.DB.GetContext(ctx, &n, `SELECT COUNT(*) FROM audit_log WHERE object_kind = 'api-token' AND object_name = 'ita/ci' AND actor = 'tester'`); err != nil || n != 4 {
		t.Errorf("audit rows of ita/ci: %d, %v; want 4 (two adds, two deletes)", n, err)
	}
	var leaks int
	if err := sc.DB.GetContext(ctx, &leaks, `SELECT COUNT(*) FROM audit_log WHERE object_kind = 'api-token' AND (after_json LIKE '%hash%' OR before_json LIKE '%hash%')`); err != nil || leaks != 0 {
		t.Errorf("audit rows with a hash: %d, %v", leaks, err)
	}
}

// TestTokensGoWithTheirTenant: removing a tenant deletes its tokens
// (audited), so a tenant created later under the same name is not opened
// by them; its own new tokens work. Admin tokens and other tenants' stay.
func TestTokensGoWithTheirTenant(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	sc, err := storetest.New(ctx, env.DBDSN, "gpubridge_tokgone")
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	tenants, tokens := tenantstore.New(sc.DB), tokenstore.New(sc.DB)
	put := func(names ...string) {
		t.Helper()
		var ts []tenant.Tenant
		for _, n := range names {
			ts = append(ts, tenant.Tenant{Name: n, State: tenant.Active})
		}
		if _, err := tenants.Put(ctx, "tester", ts); err != nil {
			t.Fatal(err)
		}
	}
	add := func(tenantName, name string, scope token.Scope) token.Token {
		t.Helper()
		_, h, err := token.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := tokens.Add(ctx, "tester", token.Token{Tenant: tenantName, Name: name, Scope: scope, CreatedAt: time.Now(), CreatedBy: "tester", Hash: h})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	put("gone", "stays")
	old, other, adm := add("gone", "ci", token.Book), add("stays", "ci", token.Read), add("", "ops", token.Admin)
	if _, err := tenants.MarkDeleting(ctx, "tester", []string{"gone"}); err != nil {
		t.Fatal(err)
	}
	if err := tenants.Remove(ctx, "tester", []string{"gone"}); err != nil {
		t.Fatal(err)
	}
	put("gone") // a new tenant under the same name
	if _, err := tokens.Lookup(ctx, old.Hash); !errors.Is(err, tokenstore.ErrNotFound) {
		t.Errorf("the removed tenant's token after a new tenant of its name: %v; want ErrNotFound", err)
	}
	for _, k := range []token.Token{other, adm, add("gone", "ci", token.Read)} {
		if _, err := tokens.Lookup(ctx, k.Hash); err != nil {
			t.Errorf("token %s: %v; want found", k.Key(), err)
		}
	}
	var n int
	if err := sc.DB.GetContext(ctx, &n, `SELECT COUNT(*) FROM audit_log WHERE object_kind = 'api-token' AND object_name = 'gone/ci' AND action = 'delete'`); err != nil || n != 1 {
		t.Errorf("audit rows of the token's removal: %d, %v; want 1", n, err)
	}
}
