package api

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
)

// The token routes: a tenant admin (a person listed in the tenant's
// admins, signed in with a Slurm JWT) lists, adds and revokes its own
// tenant's tokens, of scope read or book only, through the token use
// cases the CLI runs (add token, show tokens, delete token); the audit
// log names the person. An admin token may too; a tenant's token may not.

// TokenCases are the token use cases of the CLI (cmd/gpubridge/app's
// AddToken, ListTokens, DeleteToken). An error in what the client gave
// comes back as InputError.
type TokenCases interface {
	Add(ctx context.Context, actor string, t token.Token) (token.Issued, error)
	List(ctx context.Context, tenant string) ([]token.Token, error)
	Delete(ctx context.Context, actor, tenant, name string) (token.Token, error)
}

// InputError marks err as the client's mistake: the API answers 400 with
// its message.
func InputError(err error) error {
	if err == nil {
		return nil
	}
	return &httpError{http.StatusBadRequest, errorBody{Error: err.Error()}}
}

// ErrNotFound is what a use case returns for an object that does not
// exist (404, as for another tenant's).
var ErrNotFound = errNotFound

// errNotTenantAdmin: the token routes need the tenant's admin.
var errNotTenantAdmin = errors.New("only the tenant's admins (signed in with their Slurm token) manage its tokens")

// tenantAdmin refuses (403) a request whose sign-in is not the path
// tenant's admin (or an admin token), and one without token use cases.
func (s *Server) tenantAdmin(q *req) (TokenCases, error) {
	if q.tok.Scope != token.Admin && !slices.Contains(q.tok.AdminOf, q.tenant) {
		return nil, &httpError{http.StatusForbidden, errorBody{Error: errNotTenantAdmin.Error()}}
	}
	if s.o.TokenCases == nil {
		return nil, errUnavailable
	}
	return s.o.TokenCases, nil
}

// listTokens lists the tenant's tokens (never a secret: only hashes are
// kept).
func (s *Server) listTokens(q *req) (int, any, error) {
	tc, err := s.tenantAdmin(q)
	if err != nil {
		return 0, nil, err
	}
	ts, err := tc.List(q.r.Context(), q.tenant)
	if err != nil {
		return 0, nil, err
	}
	out := make([]token.Token, 0, len(ts))
	for _, t := range ts {
		if t.Tenant == q.tenant {
			out = append(out, t)
		}
	}
	return http.StatusOK, map[string]any{"tenant": q.tenant, "tokens": out}, nil
}

// addToken makes a token of the tenant from the body's name, scope (read
// or book: never broader than the tenant's own) and expires, and answers
// it with its secret, shown only now.
func (s *Server) addToken(q *req) (int, any, error) {
	tc, err := s.tenantAdmin(q)
	if err != nil {
		return 0, nil, err
	}
	fields, err := bookingFields(q.w, q.r, []string{"name", "scope", "expires"})
	if err != nil {
		return 0, nil, err
	}
	fields["tenant"] = q.tenant
	t, ps := token.Parse(fields, s.now(), q.tok.Actor())
	if t.Scope == token.Admin {
		ps = append(ps, token.Problem{Field: "scope", Msg: "a tenant's token is read or book"})
	}
	if len(ps) > 0 {
		var rp reserve.Problems
		for _, p := range ps {
			rp = append(rp, reserve.Problem(p))
		}
		return 0, nil, badRequest(rp)
	}
	is, err := tc.Add(q.r.Context(), q.tok.Actor(), t)
	if err != nil {
		return 0, nil, err
	}
	s.o.Logger.Info("token added through the API", "token", is.Token.Key(), "actor", q.tok.Actor())
	return http.StatusCreated, is, nil
}

// deleteToken revokes the tenant's token of the path's name.
func (s *Server) deleteToken(q *req) (int, any, error) {
	tc, err := s.tenantAdmin(q)
	if err != nil {
		return 0, nil, err
	}
	t, err := tc.Delete(q.r.Context(), q.tok.Actor(), q.tenant, q.r.PathValue("name"))
	if err != nil {
		return 0, nil, err
	}
	s.tokens.forget(t.Hash)
	return http.StatusOK, t, nil
}
