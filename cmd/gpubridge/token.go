package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
	"github.com/gpubridge/gpubridge/internal/kv"
)

// registerTokens adds the tenant API's token commands: add token, show
// tokens, delete token.
func registerTokens(a *App, show, add, del *cobra.Command) {
	add.AddCommand(addTokenCmd(a))
	show.AddCommand(showTokensCmd(a))
	del.AddCommand(deleteTokenCmd(a))
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
		RunE: a.do(takes{Spec: kv.Spec{Keys: token.AddKeys}, names: noName,
			usage: "add token takes key=value options only (got %q); e.g. tenant=acme scope=read name=ci"},
			func(ctx context.Context, p kv.Args) error {
				t, err := app.ParseAddToken(app.Actor(), p.Where)
				if err != nil {
					return err
				}
				return prints(a, app.IssuedPrintout)(a.AddToken(ctx, app.Actor(), t))
			}),
	}
}

func showTokensCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:               "tokens [tenant=NAME]",
		Short:             "List the tenant API's tokens (never the tokens themselves)",
		ValidArgsFunction: completeTenants(a, false),
		RunE: a.do(takes{Spec: kv.Spec{Keys: []string{"tenant"}}, views: views(token.Table(nil, time.Time{})),
			names: noName, usage: "show tokens takes tenant=NAME only (got %q)"},
			func(ctx context.Context, p kv.Args) error {
				return shows(a, app.TokenList.Table)(a.ListTokens(ctx, p.Where["tenant"]))
			}),
	}
}

func deleteTokenCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:               "token [tenant=NAME] name=NAME",
		Short:             "Revoke a tenant API token at once (an admin token: name= without tenant=)",
		ValidArgsFunction: completeTenants(a, false),
		RunE: a.do(takes{Spec: kv.Spec{Keys: []string{"tenant", "name"}}, names: noName, usage: token.DeleteUsage},
			func(ctx context.Context, p kv.Args) error {
				k, err := app.ParseTokenKey(p.Where)
				if err != nil {
					return err
				}
				return tells(a, token.Deleted)(a.DeleteToken(ctx, app.Actor(), k, a.confirmer()))
			}),
	}
}
