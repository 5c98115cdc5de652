package token

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	tk, ps := Parse(map[string]string{"tenant": "acme", "scope": "READ", "name": "ci", "expires": "90d"}, now, "root")
	if len(ps) > 0 {
		t.Fatalf("problems: %v", ps)
	}
	want := Token{Tenant: "acme", Name: "ci", Scope: Read, CreatedAt: now, CreatedBy: "root", ExpiresAt: now.Add(90 * 24 * time.Hour)}
	if diff := cmp.Diff(want, tk); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if _, ps := Parse(map[string]string{"scope": "write", "expires": "soon"}, now, "root"); !hasField(ps, "expires") || !hasField(ps, "scope") {
		t.Errorf("problems %v; want scope and expires among them", ps)
	}
}

func hasField(ps Problems, field string) bool {
	for _, p := range ps {
		if p.Field == field {
			return true
		}
	}
	return false
}

type fakeAdder struct {
	added []Token
	err   error
}

func (f *fakeAdder) Add(_ context.Context, _ string, t Token) (Token, error) {
	if f.err != nil {
		return Token{}, f.err
	}
	t.ID = int64(len(f.added) + 1)
	f.added = append(f.added, t)
	return t, nil
}

func TestIssue(t *testing.T) {
	ctx := context.Background()
	known := func(_ context.Context, name string) (bool, error) { return name == "acme", nil }
	st := &fakeAdder{}
	got, plain, err := Issue(ctx, st, known, "root", Token{Tenant: "acme", Name: "ci", Scope: Read}, nil)
	if err != nil || got.ID != 1 || !strings.HasPrefix(plain, "gpb_") {
		t.Fatalf("Issue = %+v, %q, %v", got, plain, err)
	}
	if h, _ := HashOf(plain); h != st.added[0].Hash {
		t.Errorf("stored hash is not the secret's")
	}
	if _, _, err := Issue(ctx, st, known, "root", Token{Tenant: "globex", Name: "ci", Scope: Read}, nil); !errors.Is(err, ErrNoTenant) || len(st.added) != 1 {
		t.Errorf("unknown tenant: %v, %d stored; want ErrNoTenant and nothing stored", err, len(st.added))
	}
	exists := errors.New("token exists")
	in := Token{Tenant: "acme", Name: "ci", Scope: Read}
	if back, _, err := Issue(ctx, &fakeAdder{err: exists}, known, "root", in, nil); !errors.Is(err, exists) || back.DeleteArgs() != "tenant=acme name=ci" {
		t.Errorf("refused add: %+v, %v; want the error and the token asked for", back, err)
	}
}

func TestTable(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	tb := Table([]Token{{Name: "grafana", Scope: Admin, CreatedAt: at, CreatedBy: "root"}, {Tenant: "acme", Name: "ci", Scope: Read, CreatedAt: at, ExpiresAt: at.Add(time.Hour)}}, at.Add(2*time.Hour))
	want := [][]string{
		{"(admin)", "grafana", "admin", "active", "never", "2026-12-01T10:00:00Z", "root", ""},
		{"acme", "ci", "read", "expired", "2026-12-01T11:00:00Z", "2026-12-01T10:00:00Z", "", ""},
	}
	if diff := cmp.Diff(want, tb.Rows); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if tk := (Token{Name: "x"}); tk.DeleteArgs() != "name=x" {
		t.Errorf("admin DeleteArgs = %q", tk.DeleteArgs())
	}
}
