package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/check"
	hmetrics "github.com/gpubridge/gpubridge/bridge/health/metrics"
	"github.com/gpubridge/gpubridge/bridge/health/setup"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	bmetrics "github.com/gpubridge/gpubridge/bridge/reserve/metrics"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/internal/config"
	"github.com/gpubridge/gpubridge/internal/kv"
)

// registerHealth adds the node health commands: check node, resume node,
// show health, show checks and health run-once.
func registerHealth(a *App, root, show *cobra.Command) {
	subcommand(root, "check", "Run health checks now").AddCommand(checkNodeCmd(a))
	subcommand(root, "resume", "Return what gpubridge holds to service").AddCommand(resumeNodeCmd(a))
	root.AddCommand(healthCmd(a))
	show.AddCommand(showHealthCmd(a), showChecksCmd(a))
}

// healthService builds the health service of the configuration for a
// command (bridge/health/setup).
func (a *App) healthService(ctx context.Context) (*health.Service, error) {
	return a.healthServiceWith(ctx, nil, nil)
}

// healthServiceWith builds the health service of the configuration
// (bridge/health/setup), with the daemon's recorders when given: what the
// configuration says is checked before anything connects. When gpubridge
// projects bookings (schedules.bookings), a node the service holds or
// releases has its bookings re-projected at once (bookingMover).
func (a *App) healthServiceWith(ctx context.Context, obs *hmetrics.Recorder, bookings *bmetrics.Recorder) (*health.Service, error) {
	c, err := a.Config()
	if err != nil {
		return nil, err
	}
	nodes, cat, err := setup.Check(c)
	var ve config.ValidationError
	if err != nil && !errors.As(err, &ve) {
		return nil, usageError{err}
	}
	if err != nil {
		return nil, err
	}
	cl, err := a.Slurm(ctx)
	if err != nil {
		return nil, err
	}
	db, err := a.DB(ctx)
	if err != nil {
		return nil, err
	}
	p := setup.Params{Config: c, Slurm: cl, DB: db, Logger: a.Logger().With("component", "health")}
	if obs != nil {
		p.Observer = obs
	}
	if c.Schedules.Bookings != "" {
		p.Mover = bookingMover{a: a, rec: bookings}
	}
	svc, err := setup.New(p, nodes, cat)
	if err != nil {
		return nil, usageError{err}
	}
	return svc, nil
}

// bookingMover runs the booking projector (bridge/reserve) under the
// writer lock when the health service held or released nodes: a booking
// on a drained node is marked at risk, or moved to healthy GPUs where
// the ledger has room.
type bookingMover struct {
	a   *App
	rec *bmetrics.Recorder // the daemon's; nil in a command
}

func (m bookingMover) Reproject(ctx context.Context, nodes []string) ([]string, error) {
	what := "gpubridge health (bookings on " + strings.Join(nodes, ",") + ")"
	p, err := m.a.projector(ctx, what)
	if err != nil {
		return nil, err
	}
	p.Logger = m.a.Logger().With("component", "bookings")
	release, err := m.a.WriterLockFor(ctx, what)
	if err != nil {
		return nil, err
	}
	defer release()
	rep, err := p.Project(ctx)
	if m.rec != nil {
		m.rec.Observe(rep, err)
	}
	return projectionLines(rep), err
}

// projectionLines say what a projection did, for the health report: each
// action with its outcome, then each booking at risk and why.
func projectionLines(rep reserve.Report) []string {
	var out []string
	for _, x := range rep.Actions {
		l := x.Action.String() + " (" + x.Outcome + ")"
		if x.Error != "" {
			l += ": " + x.Error
		}
		out = append(out, l)
	}
	for _, b := range rep.AtRisk {
		out = append(out, fmt.Sprintf("booking %d of %s (%s) at risk: %s", b.ID, b.Tenant, b.What(), b.Note))
	}
	return out
}

// readInput reads a file, or stdin for "-".
func readInput(stdin io.Reader, name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(stdin)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, usageError{err}
	}
	return b, nil
}

// speakFor checks that the invoking user may act for a tenant.
func (a *App) speakFor(ctx context.Context, tenantName string) error {
	db, err := a.DB(ctx)
	if err != nil {
		return err
	}
	err = setup.SpeakFor(ctx, tenantstore.New(db), tenantName, actor())
	if errors.Is(err, setup.ErrNoTenant) {
		return usageError{err}
	}
	return err
}

// healthErr marks the service's refusals of what was asked as usage
// errors (exit 2).
func healthErr(err error) error {
	if errors.Is(err, health.ErrInvalid) || errors.Is(err, health.ErrUnknownNode) {
		return usageError{err}
	}
	return err
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
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := kv.Parse(args, kv.Spec{Keys: []string{"check", "tenant", "wait", "peer"}})
			if err != nil {
				return usageError{err}
			}
			if len(p.Names) != 1 {
				return usagef("check node takes one node name, then key=value options (got %q)", p.Names)
			}
			var wait time.Duration
			if v, ok := p.Where["wait"]; ok {
				if wait, err = time.ParseDuration(v); err != nil || wait <= 0 {
					return usagef("wait=%q: want a duration such as 90s or 30m", v)
				}
			}
			tenantName := p.Where["tenant"]
			if tenantName != "" {
				if err := a.speakFor(ctx, tenantName); err != nil {
					return err
				}
			}
			svc, err := a.healthService(ctx)
			if err != nil {
				return err
			}
			r, res, err := svc.CheckNow(ctx, health.Request{Node: p.Names[0], Checks: kv.List(p.Where["check"]), Tenant: tenantName, Actor: actor(), Peer: p.Where["peer"]}, wait)
			if err != nil {
				return healthErr(err)
			}
			if wait == 0 {
				return a.Print(health.RunsTable([]health.Run{r}))
			}
			return a.Print(health.ResultsTable(res))
		},
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
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := kv.Parse(args, kv.Spec{Keys: []string{"reason"}})
			if err != nil {
				return usageError{err}
			}
			if len(p.Names) != 1 {
				return usagef("resume node takes one node name (got %q)", p.Names)
			}
			svc, err := a.healthService(ctx)
			if err != nil {
				return err
			}
			if err := a.Confirm(fmt.Sprintf("Resume %s now, without its requalify runs (audited)", p.Names[0])); err != nil {
				return err
			}
			n, err := svc.ResumeNode(ctx, p.Names[0], actor(), p.Where["reason"])
			if err != nil {
				return healthErr(err)
			}
			return a.Print(health.NodeTable(n))
		},
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
			p, err := a.showArgs(args, kv.Spec{Keys: []string{"model", "gpus", "exit"}}, health.JudgeTable("", "", check.Result{}))
			if err != nil {
				return err
			}
			if len(p.Names) != 2 {
				return usagef("judge takes a check name and a file, then key=value options (got %q)", p.Names)
			}
			in := check.Input{Model: p.Where["model"]}
			for key, dst := range map[string]*int{"gpus": &in.GPUs, "exit": &in.ExitCode} {
				if v, ok := p.Where[key]; ok {
					if *dst, err = strconv.Atoi(v); err != nil || *dst < 0 {
						return usagef("%s=%q: want a number, 0 or more", key, v)
					}
				}
			}
			c, err := a.Config()
			if err != nil {
				return err
			}
			cat, err := setup.Catalog(c)
			if err != nil {
				return err
			}
			if in.Output, err = readInput(cmd.InOrStdin(), p.Names[1]); err != nil {
				return err
			}
			r, err := cat.Judge(p.Names[0], in)
			if err != nil {
				return usageError{err}
			}
			return a.Print(health.JudgeTable(p.Names[0], p.Names[1], r))
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
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := kv.Parse(args, kv.Spec{Keys: []string{"schedule"}})
			if err != nil {
				return usageError{err}
			}
			if len(p.Names) > 0 {
				return usagef("unexpected %q: use schedule=NAME", p.Names[0])
			}
			svc, err := a.healthService(cmd.Context())
			if err != nil {
				return err
			}
			name := p.Where["schedule"]
			if name == "" {
				name = health.AcceptanceSchedule
			}
			rep, err := svc.Cycle(cmd.Context(), name)
			if perr := a.Print(health.ReportTable(rep)); perr != nil {
				return perr
			}
			return healthErr(err)
		},
	})
	return cmd
}

func showChecksCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "checks [node=NAME] [tenant=NAME] [check=NAME] [run=ID] [since=24h] [limit=N]",
		Short: "Health check results, newest first (a tenant sees the checks it triggered)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := a.showArgs(args, kv.Spec{Keys: []string{"node", "tenant", "check", "run", "since", "limit"}}, health.ResultsTable(nil))
			if err != nil {
				return err
			}
			if len(p.Names) > 0 {
				return usagef("unexpected %q: use node=NAME", p.Names[0])
			}
			f := health.ResultFilter{Node: p.Where["node"], Tenant: p.Where["tenant"], Check: p.Where["check"]}
			if v, ok := p.Where["run"]; ok {
				if f.RunID, err = strconv.ParseInt(v, 10, 64); err != nil || f.RunID <= 0 {
					return usagef("run=%q: want a run id", v)
				}
			}
			if v, ok := p.Where["since"]; ok {
				d, err := time.ParseDuration(v)
				if err != nil || d <= 0 {
					return usagef("since=%q: want a duration such as 24h", v)
				}
				f.Since = time.Now().Add(-d)
			}
			if v, ok := p.Where["limit"]; ok {
				if f.Limit, err = strconv.Atoi(v); err != nil || f.Limit <= 0 {
					return usagef("limit=%q: want a positive number", v)
				}
			}
			if f.Tenant != "" {
				if err := a.speakFor(ctx, f.Tenant); err != nil {
					return err
				}
			}
			svc, err := a.healthService(ctx)
			if err != nil {
				return err
			}
			res, err := svc.Results(ctx, f)
			if err != nil {
				return err
			}
			return a.Print(health.ResultsTable(res))
		},
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
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := a.showArgs(args, kv.Spec{Keys: []string{"node", "tenant", "since"}}, health.NodesTable(nil), health.HistoryTable(nil))
			if err != nil {
				return err
			}
			history := len(p.Names) == 1 && p.Names[0] == "history"
			switch {
			case len(p.Names) > 0 && !history:
				return usagef("unexpected %q: use node=NAME (or history tenant=NAME)", p.Names[0])
			case history && p.Where["tenant"] == "":
				return usagef("history is a tenant's view: add tenant=NAME (an admin sees every check with show checks)")
			case !history && p.Where["since"] != "":
				return usagef("since= goes with history tenant=NAME")
			}
			since := 168 * time.Hour
			if v, ok := p.Where["since"]; ok {
				if since, err = time.ParseDuration(v); err != nil || since <= 0 {
					return usagef("since=%q: want a duration such as 168h", v)
				}
			}
			if t := p.Where["tenant"]; t != "" {
				if err := a.speakFor(ctx, t); err != nil {
					return err
				}
			}
			svc, err := a.healthService(ctx)
			if err != nil {
				return err
			}
			if history {
				hs, err := svc.TenantHistory(ctx, p.Where["tenant"], p.Where["node"], time.Now().Add(-since))
				if err != nil {
					return healthErr(err)
				}
				return a.Print(health.HistoryTable(hs))
			}
			vs, err := svc.Health(ctx, health.HealthFilter{Node: p.Where["node"], Tenant: p.Where["tenant"]})
			if err != nil {
				return healthErr(err)
			}
			return a.Print(health.NodesTable(vs))
		},
	}
}
