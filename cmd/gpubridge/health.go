package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/check"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
)

// registerHealth adds the node health commands: check node, resume node,
// show health, show checks and health run-once.
func registerHealth(a *App, root, show *cobra.Command) {
	subcommand(root, "check", "Run health checks now").AddCommand(checkNodeCmd(a))
	subcommand(root, "resume", "Return what gpubridge holds to service").AddCommand(resumeNodeCmd(a))
	root.AddCommand(healthCmd(a))
	show.AddCommand(showHealthCmd(a), showChecksCmd(a))
}

func checkNodeCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "node NAME [check=a,b] [peer=NODE] [tenant=NAME] [wait=DURATION]",
		Short: "Run health checks on a node now (as a Slurm job under the health service account)",
		Long: `Runs checks on one node as a Slurm job under the health service account
(health.account): nothing of it is billed to a tenant. Without check= it runs
health.triggerChecks (default: the acceptance set). A failing check drains
the node like a scheduled one.

tenant=NAME asks as that tenant (the invoking user must be root or one of
its admins): the node must run a job of the tenant or be booked for it, the
tenant may trigger health.tenantChecksPerHour checks an hour, and the result
is shown to that tenant only. wait=2m waits for the result and prints it.

peer=NODE is the second node of a two-node check (nccl-2node, or a site
check with nodes: 2): one job spans both nodes (srun inside it), both must
be in service and of one GPU model, and the result is each node's (a
failure drains both).

Examples:
  gpubridge check node gpu-a check=nccl-1node wait=30m
  gpubridge check node gpu-a check=nccl-2node peer=gpu-b wait=45m`,
		Args: cobra.MinimumNArgs(1),
		RunE: a.do(takes{Spec: kv.Spec{Keys: []string{"check", "tenant", "wait", "peer"}}, names: oneName,
			usage: "check node takes one node name, then key=value options (got %q)"},
			func(ctx context.Context, p kv.Args) error {
				r, err := app.ParseCheckNode(p.Names[0], p.Where)
				if err != nil {
					return err
				}
				return shows(a, app.CheckedNode.Table)(a.CheckNode(ctx, r))
			}),
	}
}

func resumeNodeCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "node NAME [reason=TEXT]",
		Short: "Admin override: a node gpubridge holds serves again now, without its requalify runs (audited)",
		Long: `Returns a node that gpubridge holds (burn-in, drained, requalify) to service
at once: its health reservation is removed and it is resumed. The override is
written to the audit log with the reason. A node drained by someone else
(a reason that does not start with "gpubridge:") is refused: gpubridge never
resumes another's drain.

Example:
  gpubridge -i resume node gpu-a reason="GPU 3 replaced, dcgmi diag -r 3 passed by hand"`,
		Args: cobra.MinimumNArgs(1),
		RunE: a.do(takes{Spec: kv.Spec{Keys: []string{"reason"}}, names: oneName, usage: "resume node takes one node name (got %q)"},
			func(ctx context.Context, p kv.Args) error {
				return shows(a, health.NodeTable)(a.ResumeNode(ctx, p.Names[0], p.Where["reason"], a.confirmer()))
			}),
	}
}

func healthCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Node health: run a schedule's cycle now",
		Args:  unknownSub,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("health needs a subcommand: run-once, judge")
		},
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "judge CHECK FILE [model=h100] [gpus=N] [exit=N]",
		Short: "Judge a saved output of a check as a run would (the parsers and thresholds of health.checks); reads only",
		Long: `judge runs the parser and thresholds of a check (a built-in or one of
health.checks) on a saved output, as a check run would judge it on a node
with gpus GPUs of model (the key of per-model thresholds), with the
command's exit code (default 0). FILE - reads stdin. It connects to
nothing; test/gpu/ runs it on a GPU machine's real nvidia-smi and dcgmi
output.

Example:
  nvidia-smi --query-gpu=index,pci.bus_id,ecc.mode.current,... --format=csv >ecc.csv
  gpubridge health judge nvidia-smi-ecc ecc.csv model=h100 gpus=8`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := a.parse(args, takes{Spec: kv.Spec{Keys: []string{"model", "gpus", "exit"}}, views: views(health.JudgeTable("", "", check.Result{})),
				names: twoNames, usage: "judge takes a check name and a file, then key=value options (got %q)"})
			if err != nil {
				return err
			}
			r, err := app.ParseJudge(p.Names[0], p.Names[1], p.Where)
			if err != nil {
				return err
			}
			return shows(a, func(r check.Result) table.Table { return health.JudgeTable(p.Names[0], p.Names[1], r) })(a.JudgeOutput(r, cmd.InOrStdin()))
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "run-once [schedule=NAME]",
		Short: "Run one cycle of a health schedule now (default: acceptance), as the daemon does",
		Long: `run-once runs one cycle of a health schedule: it finishes the check runs
whose jobs ended (results, drains, resumes), holds nodes new to gpubridge,
lets go of nodes drained by someone else, and submits the schedule's checks
(the acceptance schedule: acceptance runs on held nodes; the others: their
checks on nodes in service). It prints what it did.`,
		RunE: a.do(takes{Spec: kv.Spec{Keys: []string{"schedule"}}, names: noName, usage: "unexpected %q: use schedule=NAME"},
			func(ctx context.Context, p kv.Args) error {
				return showsPartly(a, health.ReportTable)(a.HealthCycle(ctx, p.Where["schedule"]))
			}),
	})
	return cmd
}

func showChecksCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "checks [node=NAME] [tenant=NAME] [check=NAME] [run=ID] [since=24h] [limit=N]",
		Short: "Health check results, newest first (a tenant sees the checks it triggered)",
		Args:  cobra.ArbitraryArgs,
		RunE: a.do(takes{Spec: kv.Spec{Keys: []string{"node", "tenant", "check", "run", "since", "limit"}}, views: views(health.ResultsTable(nil)),
			names: noName, usage: "unexpected %q: use node=NAME"},
			func(ctx context.Context, p kv.Args) error {
				f, err := app.ParseHealthResults(p.Where)
				if err != nil {
					return err
				}
				return shows(a, health.ResultsTable)(a.HealthResults(ctx, f))
			}),
	}
}

func showHealthCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "health [history] [node=NAME] [tenant=NAME] [since=168h]",
		Short: "Nodes under health management: lifecycle state, why, Slurm state, last check",
		Long: `Lists the nodes under health management: lifecycle state, why, since when,
Slurm's state and reason, the health reservation, the run in flight and the
last check. tenant=NAME (as root or one of its admins) lists the nodes the
tenant uses now.

history tenant=NAME is the tenant's view of the nodes it used since a time
(since=, default 168h): when its jobs ran on each node (slurmdbd's records),
the node's lifecycle changes then (why it was drained, resumed), and the
results of the checks that ran then: the tenant's own and gpubridge's
scheduled ones, never another tenant's.

Examples:
  gpubridge show health
  gpubridge show health history tenant=acme since=720h`,
		Args: cobra.ArbitraryArgs,
		RunE: a.do(takes{Spec: kv.Spec{Keys: []string{"node", "tenant", "since"}}, views: views(health.NodesTable(nil), health.HistoryTable(nil))},
			func(ctx context.Context, p kv.Args) error {
				r, err := app.ParseShowHealth(p.Names, p.Where)
				if err != nil {
					return err
				}
				return shows(a, app.NodeHealth.Table)(a.ShowHealth(ctx, r))
			}),
	}
}
