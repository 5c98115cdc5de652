package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/burst/service"
	"github.com/gpubridge/gpubridge/internal/config"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
)

// registerBurst adds `burst run-once`, `show burst`, `config render` and
// `config check`. The daemon's burst job is wired in jobs.go.
func registerBurst(a *App, root, show *cobra.Command) {
	root.AddCommand(burstCmd(a))
	show.AddCommand(showBurstCmd(a))
	cfg := subcommand(root, "config", "Render gpubridge's Slurm configuration and check the cluster against it")
	cfg.AddCommand(configRenderCmd(a), configCheckCmd(a))
}

// burstController wires the burst use cases (bridge/burst/service) to
// slurmrestd and the database: the tenant store (or a tenants file), the
// ledger (or a rate card file) and the burst tables.
func (a *App) burstController(ctx context.Context, c config.Config, tenantsFile, rateCardFile string) (*service.Service, error) {
	cl, err := a.Slurm(ctx)
	if err != nil {
		return nil, err
	}
	db, err := a.DB(ctx)
	if err != nil {
		return nil, err
	}
	return service.New(service.Options{
		Config: c, Slurm: cl, DB: db, Logger: a.Logger().With("component", "burst"),
		TenantsFile: tenantsFile, RateCardFile: rateCardFile,
	})
}

// afterMove, when set, becomes run-once's Controller.AfterMove. Only tests
// set it (TestBurstAcceptanceKilledMidCycle kills its helper process right
// after the first move); the shipped binary has no flag for it.
var afterMove func(n int)

func burstCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "burst",
		Short: "The burst controller: overflow of quota-held jobs to the on-demand tier",
		Args:  cobra.NoArgs,
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
			ctx := cmd.Context()
			c, err := a.Config()
			if err != nil {
				return err
			}
			ctrl, err := a.burstController(ctx, c, tenantsFile, rateCard)
			if err != nil {
				return err
			}
			if dryRun {
				p, err := ctrl.Plan(ctx)
				if err != nil {
					return err
				}
				return a.Print(cycleTable(burst.Result{Plan: p}, true))
			}
			ctrl.AfterMove = afterMove
			release, err := a.writerLockFor(ctx, cmd.CommandPath())
			if err != nil {
				return err
			}
			defer release()
			res, err := ctrl.Cycle(ctx)
			if perr := a.Print(cycleTable(res, false)); perr != nil && err == nil {
				err = perr
			}
			return err
		},
	}
	once.Flags().StringVar(&tenantsFile, "tenants", "", "read tenants from this tenants file instead of the tenant store")
	once.Flags().StringVar(&rateCard, "rate-card", "", "price with this rate card file instead of the stored one")
	once.Flags().BoolVar(&dryRun, "dry-run", false, "decide and print, move nothing")
	cmd.AddCommand(once)
	return cmd
}

// actionRow is one line of `burst run-once`.
type actionRow struct {
	Action string `json:"action"`
	Tenant string `json:"tenant"`
	JobID  int64  `json:"jobId"`
	User   string `json:"user"`
	GPUs   string `json:"gpus"`
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

func cycleTable(res burst.Result, dry bool) table.Table {
	var rows []actionRow
	moves := res.Moved
	verb := "moved"
	if dry {
		moves, verb = res.Plan.Moves, "would-move"
	}
	for _, m := range moves {
		rows = append(rows, actionRow{verb, m.Tenant, m.Job.ID, m.Job.User, m.GPUs.String(), m.Job.Reason,
			fmt.Sprintf("to %s; est %s", "on-demand", burst.FormatMoney(m.Estimate, res.Plan.Minor))})
	}
	for _, f := range res.Failed {
		rows = append(rows, actionRow{"failed", f.Tenant, f.JobID, f.User, f.GPUs.String(), string(f.Reason), f.Detail})
	}
	for _, r := range res.Plan.Refusals {
		rows = append(rows, actionRow{"refused", r.Tenant, r.JobID, r.User, r.GPUs.String(), string(r.Reason), r.Detail})
	}
	t := table.Table{Header: []string{"Action", "Tenant", "JobID", "User", "GPUs", "Reason", "Detail"}, Raw: rows}
	if rows == nil {
		t.Raw = []actionRow{}
	}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{r.Action, r.Tenant, strconv.FormatInt(r.JobID, 10), r.User, r.GPUs, r.Reason, r.Detail})
	}
	return t
}

// burstJobRow and burstTenantRow are the rows of `show burst` (its --json
// objects).
type (
	burstJobRow    = burst.OverviewJob
	burstTenantRow = burst.OverviewTenant
)

func showBurstCmd(a *App) *cobra.Command {
	var tenantsFile, rateCard string
	cmd := &cobra.Command{
		Use:   "burst [tenant=NAME]",
		Short: "What is bursting now, what is refused and why, on-demand spend against budget",
		Long: `show burst lists the jobs in the on-demand tier (moved by gpubridge, with the
reason and time of the move, or submitted there), the quota-held jobs left
pending and why (disabled, cap, budget, no-rate, opted-out, deferred,
move-failed), and per tenant its on-demand GPUs against its cap and its
on-demand spend this month (booked in the ledger + estimated in flight)
against its budget. It reads the live state and writes nothing.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			kvs, err := kv.Parse(args, kv.Spec{Keys: []string{"tenant"}})
			if err != nil {
				return usageError{err}
			}
			if len(kvs.Names) > 0 {
				return usagef("unexpected %q; use tenant=NAME", kvs.Names[0])
			}
			only := kvs.Where["tenant"]
			c, err := a.Config()
			if err != nil {
				return err
			}
			ctrl, err := a.burstController(ctx, c, tenantsFile, rateCard)
			if err != nil {
				return err
			}
			ov, err := ctrl.Overview(ctx, only)
			if err != nil {
				return err
			}
			return a.printBurst(ov)
		},
	}
	cmd.Flags().StringVar(&tenantsFile, "tenants", "", "read tenants from this tenants file instead of the tenant store")
	cmd.Flags().StringVar(&rateCard, "rate-card", "", "price with this rate card file instead of the stored one")
	return cmd
}

func (a *App) printBurst(ov burst.Overview) error {
	jobs, tenants := ov.Jobs, ov.Tenants
	if a.output.JSON {
		return a.Print(table.Table{Raw: ov})
	}
	jt := table.Table{Header: []string{"Tenant", "JobID", "User", "Status", "State", "GPUs", "Since", "Reason", "Detail"}}
	for _, r := range jobs {
		s := ""
		if !r.Since.IsZero() {
			s = r.Since.UTC().Format(time.RFC3339)
		}
		jt.Rows = append(jt.Rows, []string{r.Tenant, strconv.FormatInt(r.JobID, 10), r.User, r.Status, r.State, r.GPUs, s, r.Reason, r.Detail})
	}
	tt := table.Table{Header: []string{"Tenant", "Burst", "MaxOnDemandGPUs", "OnDemandGPUs", "MonthlyBudget", "Spent", "InFlight", "Committed", "Left"}}
	for _, r := range tenants {
		onoff := "off"
		if r.Burst {
			onoff = "on"
		}
		budget, left := r.Budget, r.Left
		if budget == "" {
			budget, left = "none", "-"
		}
		tt.Rows = append(tt.Rows, []string{r.Tenant, onoff, strconv.FormatInt(r.Cap, 10), strconv.FormatInt(r.OnDemandGPUs, 10),
			budget, r.Spent, r.InFlight, r.Committed, left})
	}
	if err := a.Print(jt); err != nil {
		return err
	}
	fmt.Fprintln(a.out)
	return a.Print(tt)
}
