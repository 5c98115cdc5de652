package app

import (
	"context"
	"errors"
	"time"

	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/tokenstore"
	"github.com/gpubridge/gpubridge/internal/table"
)

// The tenant API's tokens (cmd/gpubridge/api/token) in gpubridge's database
// (cmd/gpubridge/api/tokenstore).

// Tokens is the token store on gpubridge's database (which the
// configuration must name).
func (e *Env) Tokens(ctx context.Context) (*tokenstore.DB, error) {
	c, err := e.Config()
	if err != nil {
		return nil, err
	}
	if err := c.RequireDatabase(); err != nil {
		return nil, err
	}
	db, err := e.DB(ctx)
	if err != nil {
		return nil, err
	}
	return tokenstore.New(db), nil
}

// ParseAddToken reads add token's keys for actor (token.Parse: tenant=,
// scope=, name=, expires=).
func ParseAddToken(actor string, where map[string]string) (token.Token, error) {
	t, ps := token.Parse(where, time.Now(), actor)
	if len(ps) > 0 {
		return token.Token{}, Input(ps)
	}
	return t, nil
}

// AddToken makes token t (ParseAddToken) for actor. It returns the token
// with its secret, which only its hash is kept of.
func (e *Env) AddToken(ctx context.Context, actor string, t token.Token) (token.Issued, error) {
	st, err := e.Tokens(ctx)
	if err != nil {
		return token.Issued{}, err
	}
	t, plain, err := token.Issue(ctx, st, e.tenantExists, actor, t, nil)
	switch {
	case errors.Is(err, token.ErrNoTenant):
		return token.Issued{}, Input(err)
	case errors.Is(err, tokenstore.ErrExists):
		return token.Issued{}, Inputf("%v: delete it first (`gpubridge delete token %s`), or choose another name", err, t.DeleteArgs())
	}
	return token.Issued{Token: t, Secret: plain}, err
}

// tenantExists reads the tenant store.
func (e *Env) tenantExists(ctx context.Context, name string) (bool, error) {
	ts, err := e.TenantStore(ctx)
	if err != nil {
		return false, err
	}
	_, err = ts.Get(ctx, name)
	if errors.Is(err, tenantstore.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// IssuedPrintout is what add token prints of t: with --json the token
// with its secret; else the secret alone on stdout (for a script to
// capture), then on stderr what was added (token.Added).
func IssuedPrintout(t token.Issued, o table.Options) Printout {
	if o.JSON {
		return Printout{}.Table(table.Table{Raw: t})
	}
	return Printout{}.Text(t.Secret + "\n").Note(token.Added(t.Token))
}

// TokenList is what show tokens lists, as of a time (a token that has
// expired says so).
type TokenList struct {
	Tokens []token.Token
	At     time.Time
}

// Table is show tokens' table (token.Table).
func (l TokenList) Table() table.Table { return token.Table(l.Tokens, l.At) }

// ListTokens lists the tokens of a tenant, or every token when tenantName
// is empty (never the secrets: only their hashes are kept), as of now.
func (e *Env) ListTokens(ctx context.Context, tenantName string) (TokenList, error) {
	st, err := e.Tokens(ctx)
	if err != nil {
		return TokenList{}, err
	}
	ts, err := st.List(ctx, tenantName, tenantName == "")
	return TokenList{Tokens: ts, At: time.Now()}, err
}

// ParseTokenKey reads delete token's keys: name=, and tenant= for a
// tenant's token (none: an admin token). Without name= it refuses with
// token.DeleteUsage.
func ParseTokenKey(where map[string]string) (token.Token, error) {
	k := token.Token{Tenant: where["tenant"], Name: where["name"]}
	if k.Name == "" {
		return token.Token{}, Inputf("%s", token.DeleteUsage)
	}
	return k, nil
}

// DeleteToken revokes the token k names (its Tenant and Name;
// ParseTokenKey) for actor, after confirm (when given).
func (e *Env) DeleteToken(ctx context.Context, actor string, k token.Token, confirm func(string) error) (token.Token, error) {
	st, err := e.Tokens(ctx)
	if err != nil {
		return token.Token{}, err
	}
	if confirm != nil {
		if err := confirm(token.DeletePrompt(k)); err != nil {
			return token.Token{}, err
		}
	}
	t, err := st.Delete(ctx, actor, k.Tenant, k.Name)
	if errors.Is(err, tokenstore.ErrNotFound) {
		hint := ""
		if k.Tenant == "" {
			hint = "; a tenant's token needs tenant="
		}
		return t, Inputf("%v (see `gpubridge show tokens`%s)", err, hint)
	}
	return t, err
}
