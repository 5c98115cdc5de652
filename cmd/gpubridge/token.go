package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/api/token"
	"github.com/gpubridge/gpubridge/internal/app"
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
				return app.Input(err)
			}
			if len(p.Names) > 0 {
				return usagef("add token takes key=value options only (got %q); e.g. tenant=acme scope=read name=ci", p.Names)
			}
			t, err := a.AddToken(cmd.Context(), app.Actor(), p.Where)
			if err != nil {
				return err
			}
			if a.output.JSON {
				return a.Print(table.Table{Raw: t})
			}
			fmt.Fprintln(a.out, t.Secret)
			fmt.Fprint(a.err, token.Added(t.Token))
			return nil
		},
	}
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
			ts, err := a.ListTokens(cmd.Context(), p.Where["tenant"])
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
				return app.Input(err)
			}
			if len(p.Names) > 0 || p.Where["name"] == "" {
				return usagef("usage: gpubridge delete token [tenant=NAME] name=NAME (see `gpubridge show tokens`)")
			}
			t, err := a.DeleteToken(cmd.Context(), app.Actor(), p.Where["tenant"], p.Where["name"], a.confirmer())
			if err != nil {
				return err
			}
			fmt.Fprint(a.out, token.Deleted(t))
			return nil
		},
	}
}
