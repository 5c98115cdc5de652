package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
	"github.com/gpubridge/gpubridge/internal/kv"
)

// registerBurst adds `burst run-once`, `show burst`, `config render` and
// `config check`. The daemon's burst job is wired in cmd/gpubridge/app/daemon.go.
func registerBurst(a *App, root, show *cobra.Command) {
	root.AddCommand(burstCmd(a))
	show.AddCommand(showBurstCmd(a))
	cfg := subcommand(root, "config", "Render gpubridge's Slurm configuration and check the cluster against it")
	cfg.AddCommand(configRenderCmd(a), configCheckCmd(a))
}

// afterMove, when set, becomes run-once's Controller.AfterMove. Only tests
// set it (TestBurstAcceptanceKilledMidCycle kills its helper process right
// after the first move); the shipped binary has no flag for it.
var afterMove func(n int)

func burstCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "burst",
		Short: "The burst controller: overflow of quota-held jobs to the on-demand tier",
		Args:  unknownSub,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("burst needs a subcommand: run-once")
		},
	}
	var tenantsFile, rateCard string
	var dryRun bool
	once := &cobra.Command{
		Use:   "run-once",
		Short: "Run one burst cycle now: move quota-held jobs to on-demand, print what was moved and refused",
		Long: `run-once runs the cycle the daemon runs every schedules.burst: it lists
pending jobs (one slurmrestd read), picks those held by their tenant QOS's
GPU limit (QOSGrpGRES and kin) whose tenant allows burst, within the tenant's
on-demand GPU cap and monthly budget, and moves each to the on-demand
partition and QOS, recording why in its admin comment. It is idempotent:
running it again moves nothing twice.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return showsPartly(a, app.BurstCycle.Table)(a.BurstOnce(cmd.Context(), app.BurstRequest{TenantsFile: tenantsFile, RateCardFile: rateCard, DryRun: dryRun,
				AfterMove: afterMove, What: cmd.CommandPath()}))
		},
	}
	burstFileFlags(once, &tenantsFile, &rateCard)
	once.Flags().BoolVar(&dryRun, "dry-run", false, "decide and print, move nothing")
	cmd.AddCommand(once)
	return cmd
}

func showBurstCmd(a *App) *cobra.Command {
	var tenantsFile, rateCard string
	cmd := &cobra.Command{
		Use:               "burst [tenant=NAME] [table=jobs|tenants]",
		Short:             "What is bursting now, what is refused and why, on-demand spend against budget",
		ValidArgsFunction: completeTenants(a, false),
		Long: `show burst lists the jobs in the on-demand tier (moved by gpubridge, with the
reason and time of the move, or submitted there), the quota-held jobs left
pending and why (disabled, cap, budget, no-rate, opted-out, deferred,
move-failed), and per tenant its on-demand GPUs against its cap and its
on-demand spend this month (booked in the ledger + estimated in flight)
against its budget. It reads the live state and writes nothing.

It prints two tables, the jobs and the tenants; table=jobs or table=tenants
prints one. -P, -p, format= and where filters print one table: the jobs
unless table=tenants. --json prints {"jobs": [...], "tenants": [...]}, or
the array of the table= asked for.`,
		RunE: a.do(takes{Spec: kv.Spec{Keys: []string{"tenant", "table"}}, views: views(burst.Overview{}.JobsTable(), burst.Overview{}.TenantsTable()),
			names: noName, usage: "unexpected %q; use tenant=NAME"},
			func(ctx context.Context, p kv.Args) error {
				r, err := app.ParseBurst(p.Where)
				if err != nil {
					return err
				}
				r.TenantsFile, r.RateCardFile = tenantsFile, rateCard
				v, err := a.BurstOverview(ctx, r)
				if err != nil {
					return err
				}
				return a.printBurst(v.Overview, v.Which)
			}),
	}
	burstFileFlags(cmd, &tenantsFile, &rateCard)
	return cmd
}

// burstFileFlags adds --tenants and --rate-card, the files run-once and
// show burst read instead of the stores.
func burstFileFlags(cmd *cobra.Command, tenantsFile, rateCard *string) {
	cmd.Flags().StringVar(tenantsFile, "tenants", "", "read tenants from this tenants file instead of the tenant store")
	cmd.Flags().StringVar(rateCard, "rate-card", "", "price with this rate card file instead of the stored one")
}

// printBurst prints the overview's tables that its Views choose for
// which ("jobs", "tenants", or "" for both) and the output flags.
func (a *App) printBurst(ov burst.Overview, which string) error {
	return a.printViews(ov.Views(which, a.output))
}
