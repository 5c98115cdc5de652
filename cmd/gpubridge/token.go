package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/api/token"
	"github.com/gpubridge/gpubridge/bridge/api/tokenstore"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
)

// registerTokens adds the tenant API's token commands: add token, show
// tokens, delete token.
func registerTokens(a *App, show, add, del *cobra.Command) {
	add.AddCommand(addTokenCmd(a))
	show.AddCommand(showTokensCmd(a))
	del.AddCommand(deleteTokenCmd(a))
}

func (a *App) tokenStore(ctx context.Context) (*tokenstore.DB, error) {
	c, err := a.Config()
	if err != nil {
		return nil, err
	}
	if err := c.RequireDatabase(); err != nil {
		return nil, err
	}
	db, err := a.DB(ctx)
	if err != nil {
		return nil, err
	}
	return tokenstore.New(db), nil
}

func addTokenCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "token tenant=NAME scope=read|book name=NAME [expires=90d|2027-01-01|never]",
		Short: "Make a tenant API token (printed once; only its hash is kept)",
		Long: `Make a bearer token for the tenant API and status page (docs/api.md).

  tenant=acme     the tenant it sees (nothing of any other); leave it out for scope=admin
  scope=read      its own quota, usage, spend, burst state, jobs, bookings, availability
  scope=book      read, and add, modify and cancel its bookings within its booking policy
  scope=admin     everything, for every tenant (Grafana, the site's own tools)
  name=ci         what it is for; unique per tenant
  expires=90d     a duration from now (d, w, h), a date (UTC midnight), RFC 3339, or never (default)

The token (gpb_ and 43 characters, a 256-bit secret) is printed once on
stdout; gpubridge stores only its SHA-256 and cannot show it again. Adding
and deleting tokens is in the audit log (show audit).

Example:
  gpubridge add token tenant=acme scope=read name=grafana-acme expires=90d`,
		ValidArgsFunction: completeTenants(a, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := kv.Parse(args, kv.Spec{Keys: token.AddKeys})
			if err != nil {
				return usageError{err}
			}
			if len(p.Names) > 0 {
				return usagef("add token takes key=value options only (got %q); e.g. tenant=acme scope=read name=ci", p.Names)
			}
			t, ps := token.Parse(p.Where, time.Now(), actor())
			if len(ps) > 0 {
				return usageError{ps}
			}
			ctx := cmd.Context()
			st, err := a.tokenStore(ctx)
			if err != nil {
				return err
			}
			t, plain, err := token.Issue(ctx, st, a.tenantExists, actor(), t, nil)
			switch {
			case errors.Is(err, token.ErrNoTenant):
				return usageError{err}
			case errors.Is(err, tokenstore.ErrExists):
				return usagef("%v: delete it first (`gpubridge delete token %s`), or choose another name", err, t.DeleteArgs())
			case err != nil:
				return err
			}
			if a.output.JSON {
				return a.Print(table.Table{Raw: struct {
					token.Token
					Secret string `json:"token"`
				}{t, plain}})
			}
			fmt.Fprintln(a.out, plain)
			fmt.Fprintf(a.err, "Token %s added (scope %s, expires %s). It is shown only now: gpubridge keeps its hash, not the token.\n",
				t.Key(), t.Scope, t.Expiry())
			return nil
		},
	}
}

// tenantExists reads the tenant store.
func (a *App) tenantExists(ctx context.Context, name string) (bool, error) {
	db, err := a.DB(ctx)
	if err != nil {
		return false, err
	}
	_, err = tenantstore.New(db).Get(ctx, name)
	if errors.Is(err, tenantstore.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

func showTokensCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:               "tokens [tenant=NAME]",
		Short:             "List the tenant API's tokens (never the tokens themselves)",
		ValidArgsFunction: completeTenants(a, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := a.showArgs(args, kv.Spec{Keys: []string{"tenant"}}, token.Table(nil, time.Time{}))
			if err != nil {
				return err
			}
			if len(p.Names) > 0 {
				return usagef("show tokens takes tenant=NAME only (got %q)", p.Names)
			}
			ctx := cmd.Context()
			st, err := a.tokenStore(ctx)
			if err != nil {
				return err
			}
			tenantName, all := p.Where["tenant"], p.Where["tenant"] == ""
			ts, err := st.List(ctx, tenantName, all)
			if err != nil {
				return err
			}
			return a.Print(token.Table(ts, time.Now()))
		},
	}
}

func deleteTokenCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:               "token [tenant=NAME] name=NAME",
		Short:             "Revoke a tenant API token at once (an admin token: name= without tenant=)",
		ValidArgsFunction: completeTenants(a, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := kv.Parse(args, kv.Spec{Keys: []string{"tenant", "name"}})
			if err != nil {
				return usageError{err}
			}
			if len(p.Names) > 0 || p.Where["name"] == "" {
				return usagef("usage: gpubridge delete token [tenant=NAME] name=NAME (see `gpubridge show tokens`)")
			}
			ctx := cmd.Context()
			st, err := a.tokenStore(ctx)
			if err != nil {
				return err
			}
			k := token.Token{Tenant: p.Where["tenant"], Name: p.Where["name"]}
			if err := a.Confirm(" Deleting token " + k.Key() + " (requests with it are refused from now on)"); err != nil {
				return err
			}
			t, err := st.Delete(ctx, actor(), k.Tenant, k.Name)
			if errors.Is(err, tokenstore.ErrNotFound) {
				hint := ""
				if k.Tenant == "" {
					hint = "; a tenant's token needs tenant="
				}
				return usagef("%v (see `gpubridge show tokens`%s)", err, hint)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.out, "Token %s deleted: requests with it are refused (401).\n", t.Key())
			return nil
		},
	}
}
