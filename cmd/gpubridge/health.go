package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/check"
	"github.com/gpubridge/gpubridge/bridge/health/slurmadapter"
	"github.com/gpubridge/gpubridge/bridge/health/store"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/internal/config"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/slurmstr"
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

// healthService builds the health service from the configuration.
func (a *App) healthService(ctx context.Context) (*health.Service, error) {
	c, err := a.Config()
	if err != nil {
		return nil, err
	}
	h := c.Health
	if len(h.Nodes) == 0 {
		return nil, config.ValidationError{{Field: "health.nodes", Msg: "lists no node: gpubridge manages no node's health (see docs/health.md)"}}
	}
	var nodes []string
	for _, expr := range h.Nodes {
		names, err := slurmstr.ExpandHostlist(expr)
		if err != nil {
			return nil, config.ValidationError{{Field: "health.nodes", Msg: fmt.Sprintf("%q: %v", expr, err)}}
		}
		for _, n := range names {
			if !slices.Contains(nodes, n) {
				nodes = append(nodes, n)
			}
		}
	}
	defs := make([]check.Def, 0, len(h.Checks))
	for _, d := range h.Checks {
		def := check.Def{Name: d.Name, Command: d.Command, Timeout: d.Timeout.Duration, Fatal: d.Fatal, Exclusive: d.Exclusive, FailXIDs: d.FailXIDs}
		if d.Thresholds != nil {
			def.Thresholds = check.Thresholds{}
			for model, vals := range d.Thresholds {
				def.Thresholds[model] = map[string]check.Bound{}
				for name, b := range vals {
					def.Thresholds[model][name] = check.Bound{Min: b.Min, Max: b.Max}
				}
			}
		}
		defs = append(defs, def)
	}
	cat, err := check.NewCatalog(defs, "health.checks")
	if err != nil {
		return nil, usageError{err}
	}
	cl, err := a.Slurm(ctx)
	if err != nil {
		return nil, err
	}
	db, err := a.DB(ctx)
	if err != nil {
		return nil, err
	}
	cluster := c.Cluster
	if cluster == "" {
		cluster = cl.Cluster()
	}
	ad := slurmadapter.New(cl, h.User)
	ad.BookingPrefix = c.Bookings.ReservationPrefix
	sched := func(s config.HealthSchedule) health.Schedule {
		return health.Schedule{Name: s.Name, Spec: s.Spec, Checks: s.Checks, WhenIdle: s.WhenIdle}
	}
	settings := health.Settings{
		Nodes: nodes, Account: h.Account, User: h.User, QOS: h.QOS, Partition: h.Partition, MaxConcurrent: h.MaxConcurrent,
		Policy:     health.Policy{AcceptancePasses: h.AcceptancePasses, RequalifyPasses: h.RequalifyPasses},
		Acceptance: sched(h.Acceptance), TriggerChecks: h.TriggerChecks, TenantChecksPerHour: h.TenantChecksPerHour,
		StartWait: h.StartWait.Duration, MaxPending: h.MaxPending.Duration, Retention: h.Retention.Duration,
	}
	for _, s := range h.Schedules {
		settings.Schedules = append(settings.Schedules, sched(s))
	}
	svc, err := health.New(health.Params{
		Nodes: ad, Jobs: ad, Outputs: slurmadapter.Files{NodeDir: h.OutputDir, LocalDir: h.LocalOutputDir}, Store: store.New(db, cluster),
		Usage: ad, Bookings: ad, Catalog: cat, Settings: settings, Logger: a.healthLogger(),
	})
	if err != nil {
		return nil, usageError{err}
	}
	return svc, nil
}

// healthLogger: the commands print what a cycle did, so its log shows
// only warnings unless -v (the daemon logs state changes at info).
func (a *App) healthLogger() *slog.Logger {
	if a.verbose {
		return a.Logger().With("component", "health")
	}
	return slog.New(slog.NewTextHandler(a.err, &slog.HandlerOptions{Level: slog.LevelWarn})).With("component", "health")
}

// speakFor checks that the invoking user may act for a tenant: root, or
// one of the tenant's admins.
func (a *App) speakFor(ctx context.Context, tenantName string) error {
	db, err := a.DB(ctx)
	if err != nil {
		return err
	}
	t, err := tenantstore.New(db).Get(ctx, tenantName)
	if errors.Is(err, tenantstore.ErrNotFound) {
		return usagef("tenant=%s: no such tenant (see `gpubridge show tenants`)", tenantName)
	}
	if err != nil {
		return err
	}
	if who := actor(); who != "root" && !slices.Contains(t.Admins, who) {
		return fmt.Errorf("%s is not an admin of tenant %s (its admins: %s)", who, tenantName, strings.Join(t.Admins, ","))
	}
	return nil
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
		Use:   "node NAME [check=a,b] [tenant=NAME] [wait=DURATION]",
		Short: "Run health checks on a node now (as a Slurm job under the health service account)",
		Long: `Runs checks on one node as a Slurm job under the health service account
(health.account): nothing of it is billed to a tenant. Without check= it runs
health.triggerChecks (default: the acceptance set). A failing check drains
the node like a scheduled one.

tenant=NAME asks as that tenant (the invoking user must be root or one of
its admins): the node must run a job of the tenant or be booked for it, the
tenant may trigger health.tenantChecksPerHour checks an hour, and the result
is shown to that tenant only. wait=2m waits for the result and prints it.

Example:
  gpubridge check node gpu-a check=nccl-1node wait=30m`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := kv.Parse(args, kv.Spec{Keys: []string{"check", "tenant", "wait"}})
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
			r, err := svc.Trigger(ctx, health.Request{Node: p.Names[0], Checks: kv.List(p.Where["check"]), Tenant: tenantName, Actor: actor()})
			if err != nil {
				return healthErr(err)
			}
			if wait == 0 {
				return a.Print(runsTable([]health.Run{r}))
			}
			wctx, cancel := context.WithTimeout(ctx, wait)
			defer cancel()
			run, res, err := svc.Wait(wctx, r.ID)
			if err != nil {
				return fmt.Errorf("%w (the run goes on: `gpubridge show checks run=%d`)", err, r.ID)
			}
			if run.State == health.RunAborted {
				return fmt.Errorf("run %d gave no verdict: %s", run.ID, run.Note)
			}
			return a.Print(resultsTable(res))
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
			return a.Print(table.Table{Header: []string{"Node", "State", "Reason"}, Rows: [][]string{{n.Name, string(n.State), n.Reason}}, Raw: []health.Node{n}})
		},
	}
}

func healthCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Node health: run a schedule's cycle now",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("health needs a subcommand: run-once")
		},
	}
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
			if perr := a.Print(reportTable(rep)); perr != nil {
				return perr
			}
			return healthErr(err)
		},
	})
	return cmd
}

// reportTable lays out a cycle: one line per thing it did.
func reportTable(rep health.Report) table.Table {
	t := table.Table{Header: []string{"What", "Node", "Detail"}, Raw: rep}
	for _, r := range rep.Finished {
		d := fmt.Sprintf("run %d (%s) job %d %s", r.ID, strings.Join(r.Checks, ","), r.JobID, r.State)
		if r.Note != "" {
			d += ": " + r.Note
		}
		t.Rows = append(t.Rows, []string{"finished", r.Node, d})
	}
	for _, e := range rep.Events {
		from := string(e.From)
		if from == "" {
			from = "new"
		}
		t.Rows = append(t.Rows, []string{"state", e.Node, from + " -> " + string(e.To) + ": " + e.Reason})
	}
	for _, x := range rep.Actions {
		d := string(x.Kind)
		if x.Reason != "" {
			d += " " + strconv.Quote(x.Reason)
		}
		t.Rows = append(t.Rows, []string{"slurm", x.Node, d})
	}
	for _, r := range rep.Submitted {
		t.Rows = append(t.Rows, []string{"submitted", r.Node, fmt.Sprintf("run %d (%s) job %d", r.ID, strings.Join(r.Checks, ","), r.JobID)})
	}
	for _, n := range sortedNames(rep.Skipped) {
		t.Rows = append(t.Rows, []string{"skipped", n, rep.Skipped[n]})
	}
	for _, e := range rep.Errors {
		t.Rows = append(t.Rows, []string{"error", "", e})
	}
	return t
}

func sortedNames(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func runsTable(rs []health.Run) table.Table {
	t := table.Table{Header: []string{"Run", "Node", "Checks", "Purpose", "Tenant", "JobID", "State"}, Raw: rs}
	for _, r := range rs {
		t.Rows = append(t.Rows, []string{strconv.FormatInt(r.ID, 10), r.Node, strings.Join(r.Checks, ","), string(r.Purpose), r.Tenant,
			strconv.FormatInt(r.JobID, 10), string(r.State)})
	}
	return t
}

func resultsTable(rs []health.StoredResult) table.Table {
	t := table.Table{Header: []string{"At", "Run", "Node", "Check", "Verdict", "Reason", "Values", "Duration", "JobID", "Tenant", "Purpose"}, Raw: rs}
	if rs == nil {
		t.Raw = []health.StoredResult{}
	}
	for _, r := range rs {
		var vals []string
		for _, v := range r.Values {
			vals = append(vals, v.String())
		}
		t.Rows = append(t.Rows, []string{r.At.UTC().Format(time.RFC3339), strconv.FormatInt(r.RunID, 10), r.Node, r.Check, string(r.Verdict),
			r.Reason, strings.Join(vals, " "), r.Duration().String(), strconv.FormatInt(r.JobID, 10), r.Tenant, string(r.Purpose)})
	}
	return t
}

func showChecksCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "checks [node=NAME] [tenant=NAME] [check=NAME] [run=ID] [since=24h] [limit=N]",
		Short: "Health check results, newest first (a tenant sees the checks it triggered)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := kv.Parse(args, kv.Spec{Keys: []string{"node", "tenant", "check", "run", "since", "limit"}})
			if err != nil {
				return usageError{err}
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
			return a.Print(resultsTable(res))
		},
	}
}

func showHealthCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "health [node=NAME] [tenant=NAME]",
		Short: "Nodes under health management: lifecycle state, why, Slurm state, last check",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := kv.Parse(args, kv.Spec{Keys: []string{"node", "tenant"}})
			if err != nil {
				return usageError{err}
			}
			if len(p.Names) > 0 {
				return usagef("unexpected %q: use node=NAME", p.Names[0])
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
			vs, err := svc.Health(ctx, health.HealthFilter{Node: p.Where["node"], Tenant: p.Where["tenant"]})
			if err != nil {
				return healthErr(err)
			}
			t := table.Table{Header: []string{"Node", "State", "Passes", "Reason", "Since", "Slurm", "SlurmReason", "Fenced", "Running", "LastCheck"}, Raw: vs}
			if vs == nil {
				t.Raw = []health.NodeView{}
			}
			for _, v := range vs {
				state, passes, since := string(v.State), "", ""
				if state == "" {
					state = "new"
				}
				if v.State.Held() {
					passes = fmt.Sprintf("%d/%d", v.Passes, v.Needed)
				}
				if !v.Since.IsZero() {
					since = v.Since.UTC().Format(time.RFC3339)
				}
				running, last := "", ""
				if v.Running != nil {
					running = fmt.Sprintf("run %d (%s)", v.Running.ID, strings.Join(v.Running.Checks, ","))
				}
				if v.Last != nil {
					last = fmt.Sprintf("%s %s %s", v.Last.Check, v.Last.Verdict, v.Last.At.UTC().Format(time.RFC3339))
				}
				t.Rows = append(t.Rows, []string{v.Name, state, passes, v.Reason, since, v.SlurmState, v.SlurmReason,
					strconv.FormatBool(v.Fenced), running, last})
			}
			return a.Print(t)
		},
	}
}
