package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
	"github.com/gpubridge/gpubridge/internal/kv"
)

// registerCredits adds `credit run-once`; the daemon's credit job is
// wired in cmd/gpubridge/app/daemon.go.
func registerCredits(a *App, root *cobra.Command) {
	c := &cobra.Command{
		Use:   "credit",
		Short: "Node health credits: write the credits owed now",
		Args:  unknownSub,
		RunE: func(*cobra.Command, []string) error {
			return usagef("credit needs a subcommand: run-once")
		},
	}
	c.AddCommand(creditRunOnceCmd(a))
	root.AddCommand(c)
}

func creditRunOnceCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "run-once [lookback=7d]",
		Short: "Write the node health credits owed (NODE_FAIL runs, runs killed by a gpubridge drain, booked GPU-hours lost on a held node), as the daemon's credit job does",
		Long: `run-once reads the tenants' job runs that ended other than COMPLETED in the
lookback (default health.credits.lookback) from slurm_acct_db (slurmrestd
when no slurmdb.dsn is set, as the ingest), each with
what the ledger charged for it, and gpubridge's health events; it writes
one credit line per run that ended NODE_FAIL or was killed when gpubridge
stopped its node (health.credits: enabled, minLoss, killWindow), equal to
its charged amount, negative, linked to the drain behind it. A credit is
written once: running it again adds nothing. A run whose end is not
ingested yet is credited by a later run (run "gpubridge ingest" first).
The booked GPU-hours lost while gpubridge held a booked node get one
credit line per booking, drain and GPU type, at the booked rate the
booking was charged (docs/health.md#credits). It prints the credits it
wrote.`,
		RunE: a.do(takes{Spec: kv.Spec{Keys: []string{"lookback"}}, names: noName, usage: "unexpected %q: use lookback=DURATION"},
			func(ctx context.Context, p kv.Args) error {
				lookback, err := app.ParseCreditLookback(p.Where)
				if err != nil {
					return err
				}
				return prints(a, app.CreditPrintout)(a.RunCredits(ctx, lookback))
			}),
	}
}
