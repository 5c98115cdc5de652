package token

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/internal/table"
)

// AddKeys are the keys of `add token` (Parse reads them).
var AddKeys = []string{"tenant", "scope", "name", "expires"}

// Parse reads add token's arguments (tenant=, scope=, name=, expires=)
// into a token made now by actor, without its hash, with every problem
// (Check's and the expiry's) at once.
func Parse(args map[string]string, now time.Time, actor string) (Token, Problems) {
	now = now.UTC()
	t := Token{Tenant: args["tenant"], Name: args["name"], Scope: Scope(strings.ToLower(args["scope"])), CreatedAt: now, CreatedBy: actor}
	exp, experr := ParseExpiry(args["expires"], now)
	t.ExpiresAt = exp
	ps := Check(t, now)
	if experr != nil {
		ps = append(ps, Problem{Field: "expires", Msg: experr.Error()})
	}
	return t, ps
}

// DeleteArgs are the arguments of `gpubridge delete token` for t.
func (t Token) DeleteArgs() string {
	if t.Tenant == "" {
		return "name=" + t.Name
	}
	return "tenant=" + t.Tenant + " name=" + t.Name
}

// Expiry is when t expires (RFC 3339, UTC), or never.
func (t Token) Expiry() string {
	if t.ExpiresAt.IsZero() {
		return "never"
	}
	return t.ExpiresAt.UTC().Format(time.RFC3339)
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// Table lays out tokens (show tokens) as of now; --json prints the
// records (never a secret: a Token holds only its hash).
func Table(ts []Token, now time.Time) table.Table {
	if ts == nil {
		ts = []Token{}
	}
	t := table.Table{
		Header: []string{"Tenant", "Name", "Scope", "State", "Expires", "Created", "CreatedBy", "LastUsed"},
		Keys:   []string{"tenant", "name", "scope", "state", "expires", "created", "createdBy", "lastUsed"},
		Raw:    ts,
	}
	for _, x := range ts {
		state, tn := "active", x.Tenant
		if x.Expired(now) {
			state = "expired"
		}
		if tn == "" {
			tn = "(admin)"
		}
		t.Rows = append(t.Rows, []string{tn, x.Name, string(x.Scope), state, x.Expiry(), stamp(x.CreatedAt), x.CreatedBy, stamp(x.LastUsedAt)})
	}
	return t
}

// Issued is a token just made with its secret, which is shown only then
// (add token --json).
type Issued struct {
	Token
	Secret string `json:"token"`
}

// Added is what `add token` says on stderr after the secret (stdout).
func Added(t Token) string {
	return fmt.Sprintf("Token %s added (scope %s, expires %s). It is shown only now: gpubridge keeps its hash, not the token.\n",
		t.Key(), t.Scope, t.Expiry())
}

// DeleteUsage is delete token's refusal of what it cannot take (a word
// that is no key=value, no name=).
const DeleteUsage = "usage: gpubridge delete token [tenant=NAME] name=NAME (see `gpubridge show tokens`)"

// DeletePrompt is the confirmation of deleting token k.
func DeletePrompt(k Token) string {
	return " Deleting token " + k.Key() + " (requests with it are refused from now on)"
}

// Deleted says that token t was deleted.
func Deleted(t Token) string {
	return fmt.Sprintf("Token %s deleted: requests with it are refused (401).\n", t.Key())
}

// ErrNoTenant is a token for a tenant that does not exist.
var ErrNoTenant = errors.New("no such tenant (see `gpubridge show tenants`)")

// Adder stores a new token (tokenstore); it refuses a name in use.
type Adder interface {
	Add(ctx context.Context, actor string, t Token) (Token, error)
}

// Issue makes t's secret (from random; nil is crypto/rand) and stores t
// with its hash, once its tenant (if any) is known to exist. It returns
// the stored token and the secret, which nothing keeps.
func Issue(ctx context.Context, st Adder, tenantExists func(ctx context.Context, name string) (bool, error), actor string, t Token, random io.Reader) (Token, string, error) {
	if t.Tenant != "" {
		ok, err := tenantExists(ctx, t.Tenant)
		if err != nil {
			return t, "", err
		}
		if !ok {
			return t, "", fmt.Errorf("tenant=%s: %w", t.Tenant, ErrNoTenant)
		}
	}
	plain, hash, err := New(random)
	if err != nil {
		return t, "", err
	}
	t.Hash = hash
	stored, err := st.Add(ctx, actor, t)
	if err != nil {
		return t, "", err
	}
	return stored, plain, nil
}
