package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/bridge/health/credit"
	hstore "github.com/gpubridge/gpubridge/bridge/health/store"
	"github.com/gpubridge/gpubridge/internal/config"
	"github.com/gpubridge/gpubridge/internal/kv"
)

// registerCredits adds `credit run-once`; the daemon's credit job is
// wired in jobs.go.
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
		Short: "Write the node health credits owed (NODE_FAIL runs, runs killed by a gpubridge drain), as the daemon's credit job does",
		Long: `run-once reads the tenants' job runs that ended other than COMPLETED in the
lookback (default health.credits.lookback) from slurm_acct_db (slurmrestd
when no slurmdb.dsn is set, as the ingest), each with
what the ledger charged for it, and gpubridge's health events; it writes
one credit line per run that ended NODE_FAIL or was killed when gpubridge
stopped its node (health.credits: enabled, minLoss, killWindow), equal to
its charged amount, negative, linked to the drain behind it. A credit is
written once: running it again adds nothing. A run whose end is not
ingested yet is credited by a later run (run "gpubridge ingest" first).
It prints the credits it wrote.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := kv.Parse(args, kv.Spec{Keys: []string{"lookback"}})
			if err != nil {
				return usageError{err}
			}
			if len(p.Names) > 0 {
				return usagef("unexpected %q: use lookback=DURATION", p.Names[0])
			}
			c, err := a.Config()
			if err != nil {
				return err
			}
			if v, ok := p.Where["lookback"]; ok {
				var s config.Span
				if err := s.UnmarshalJSON([]byte(v)); err != nil || s.Duration <= 0 {
					return usagef("lookback=%s: want a duration such as 7d or 36h", v)
				}
				c.Health.Credits.Lookback = s
			}
			if !c.Health.Credits.Enabled {
				return usagef("health.credits.enabled is false in the configuration: no credits are written")
			}
			job, err := a.creditJob(cmd.Context(), c, nil)
			if err != nil {
				return err
			}
			rep, err := job.RunOnce(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(a.err, "%d new credit line(s); %d owed in %s..%s from %d run(s) that ended other than COMPLETED\n",
				len(rep.Written), rep.Computed, rep.From.UTC().Format("2006-01-02T15:04:05Z"), rep.To.UTC().Format("2006-01-02T15:04:05Z"), rep.Runs)
			return a.Print(credit.ReportTable(rep))
		},
	}
}

// creditJob builds the credit job of configuration c on the App's
// connections (billing.CreditSetup).
func (a *App) creditJob(ctx context.Context, c config.Config, obs credit.Observer) (*credit.Job, error) {
	st, err := a.Ledger(ctx)
	if err != nil {
		return nil, err
	}
	cards, err := a.RateCards(ctx)
	if err != nil {
		return nil, err
	}
	db, err := a.DB(ctx)
	if err != nil {
		return nil, err
	}
	return billing.CreditSetup{Config: c, Ledger: st, Cards: cards, Labels: a.TenantLabels, Observer: obs, Health: hstore.New(db, c.Cluster),
		SlurmDB: a.SlurmDB, Slurm: func(ctx context.Context) (ingest.DBJobLister, error) { return a.Slurm(ctx) }}.Job(ctx)
}
