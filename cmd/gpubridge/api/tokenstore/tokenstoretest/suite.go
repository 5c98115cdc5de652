package tokenstoretest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/tokenstore"
)

// Run checks a store that starts empty of the tenants it uses (tenants
// named prefix+"a", prefix+"b"; the admin tokens it makes are named
// prefix+"…" too, and deleted again).
func Run(t *testing.T, s tokenstore.Store, prefix string) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	ta, tb := prefix+"a", prefix+"b"
	mk := func(tenant, name string, scope token.Scope, exp time.Time) (string, token.Token) {
		t.Helper()
		plain, h, err := token.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Add(ctx, "tester", token.Token{Tenant: tenant, Name: name, Scope: scope, ExpiresAt: exp, CreatedAt: now, CreatedBy: "tester", Hash: h})
		if err != nil {
			t.Fatalf("add %s/%s: %v", tenant, name, err)
		}
		if got.ID == 0 {
			t.Fatalf("add %s/%s: no id", tenant, name)
		}
		return plain, got
	}
	pa, a := mk(ta, "ci", token.Read, time.Time{})
	_, b := mk(tb, "ci", token.Book, now.Add(time.Hour))
	_, adm := mk("", prefix+"ops", token.Admin, time.Time{})

	// The same name twice for one tenant: refused; for another: fine.
	if _, err := s.Add(ctx, "tester", token.Token{Tenant: ta, Name: "ci", Scope: token.Read, CreatedAt: now, Hash: token.Hash{1}}); !errors.Is(err, tokenstore.ErrExists) {
		t.Errorf("second %s/ci: %v; want ErrExists", ta, err)
	}

	h, _ := token.HashOf(pa)
	got, err := s.Lookup(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, got); diff != "" {
		t.Errorf("lookup (-added +found):\n%s", diff)
	}
	if _, err := s.Lookup(ctx, token.Hash{9, 9}); !errors.Is(err, tokenstore.ErrNotFound) {
		t.Errorf("lookup of an unknown hash: %v; want ErrNotFound", err)
	}
	if got, _ := s.Lookup(ctx, b.Hash); !got.ExpiresAt.Equal(now.Add(time.Hour)) || got.Scope != token.Book {
		t.Errorf("token b = %+v", got)
	}

	// Touch moves forward only.
	used := now.Add(time.Minute)
	if err := s.Touch(ctx, a.ID, used); err != nil {
		t.Fatal(err)
	}
	if err := s.Touch(ctx, a.ID, now); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Lookup(ctx, a.Hash); !got.LastUsedAt.Equal(used) {
		t.Errorf("last use %v; want %v", got.LastUsedAt, used)
	}

	names := func(ts []token.Token, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, x := range ts {
			out = append(out, x.Key())
		}
		return out
	}
	if diff := cmp.Diff([]string{ta + "/ci"}, names(s.List(ctx, ta, false))); diff != "" {
		t.Errorf("list %s (-want +got):\n%s", ta, diff)
	}
	all := names(s.List(ctx, "", true))
	for _, k := range []string{a.Key(), b.Key(), adm.Key()} {
		if !contains(all, k) {
			t.Errorf("list all = %v; misses %s", all, k)
		}
	}
	if got := names(s.List(ctx, "", false)); !contains(got, adm.Key()) || contains(got, a.Key()) {
		t.Errorf("list of admin tokens = %v", got)
	}

	// Delete: gone, and its hash no longer found.
	if _, err := s.Delete(ctx, "tester", ta, "nope"); !errors.Is(err, tokenstore.ErrNotFound) {
		t.Errorf("delete unknown: %v", err)
	}
	del, err := s.Delete(ctx, "tester", ta, "ci")
	if err != nil || del.ID != a.ID {
		t.Fatalf("delete: %+v %v", del, err)
	}
	if _, err := s.Lookup(ctx, a.Hash); !errors.Is(err, tokenstore.ErrNotFound) {
		t.Errorf("lookup of a deleted token: %v; want ErrNotFound", err)
	}
	// The name is free again.
	mk(ta, "ci", token.Read, time.Time{})
	for _, k := range [][2]string{{ta, "ci"}, {tb, "ci"}, {"", prefix + "ops"}} {
		if _, err := s.Delete(ctx, "tester", k[0], k[1]); err != nil {
			t.Errorf("cleanup %v: %v", k, err)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
