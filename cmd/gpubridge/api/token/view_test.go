package token

import (
	"context"
	"encoding/json"
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

// TestMessages: what add and delete token say, and add token's --json
// record (the token's fields with its secret as "token").
func TestMessages(t *testing.T) {
	tk := Token{Tenant: "acme", Name: "ci", Scope: Read, ExpiresAt: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}
	if got, want := Added(tk), "Token acme/ci added (scope read, expires 2027-01-01T00:00:00Z). It is shown only now: gpubridge keeps its hash, not the token.\n"; got != want {
		t.Errorf("Added %q\nwant %q", got, want)
	}
	if got, want := DeletePrompt(Token{Name: "grafana"}), " Deleting token (admin)/grafana (requests with it are refused from now on)"; got != want {
		t.Errorf("DeletePrompt %q\nwant %q", got, want)
	}
	if got, want := Deleted(tk), "Token acme/ci deleted: requests with it are refused (401).\n"; got != want {
		t.Errorf("Deleted %q\nwant %q", got, want)
	}
	b, err := json.Marshal(Issued{Token: tk, Secret: "gpb_x"})
	if err != nil || !strings.Contains(string(b), `"token":"gpb_x"`) || !strings.Contains(string(b), `"tenant":"acme"`) {
		t.Errorf("Issued JSON %s %v", b, err)
	}
}
