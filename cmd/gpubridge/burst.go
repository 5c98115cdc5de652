package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/burst/metrics"
	"github.com/gpubridge/gpubridge/bridge/burst/slurmjobs"
	"github.com/gpubridge/gpubridge/bridge/burst/spend"
	"github.com/gpubridge/gpubridge/bridge/burst/store"
	"github.com/gpubridge/gpubridge/bridge/slurmconf"
	"github.com/gpubridge/gpubridge/bridge/slurmrest"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/internal/config"
	"github.com/gpubridge/gpubridge/internal/daemon"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
)

// registerBurst adds `burst run-once`, `show burst`, `config render`,
// `config check` and the daemon's burst job (schedules.burst).
func registerBurst(a *App, root, show *cobra.Command) {
	root.AddCommand(burstCmd(a))
	show.AddCommand(showBurstCmd(a))
	cfg := subcommand(root, "config", "Render gpubridge's Slurm configuration and check the cluster against it")
	cfg.AddCommand(configRenderCmd(a), configCheckCmd(a))
	a.addJob(func(_ context.Context, a *App, c config.Config) (daemon.Scheduled, error) {
		rec := burstRecorder(a)
		return daemon.Scheduled{Spec: c.Schedules.Burst, Job: &lazyJob{name: "burst", build: func(ctx context.Context) (daemon.Job, error) {
			ctrl, err := a.burstController(ctx, c, "", "")
			if err != nil {
				return nil, err
			}
			ctrl.Recorder = rec
			return ctrl, nil
		}}}, nil
	})
}

// subcommand returns root's command name, adding it when no other feature
// has (several features hang commands under `config`).
func subcommand(root *cobra.Command, name, short string) *cobra.Command {
	for _, c := range root.Commands() {
		if c.Name() == name {
			return c
		}
	}
	c := verb(name, short)
	root.AddCommand(c)
	return c
}

var (
	recordersMu sync.Mutex
	recorders   = map[*App]*metrics.Recorder{}
)

// burstRecorder registers the burst metrics once per process (the
// scheduler is rebuilt on every SIGHUP).
func burstRecorder(a *App) *metrics.Recorder {
	recordersMu.Lock()
	defer recordersMu.Unlock()
	if r, ok := recorders[a]; ok {
		return r
	}
	r := metrics.New(a.Registry())
	recorders[a] = r
	return r
}

// lazyJob builds its job at the first run, so that the daemon starts (and
// retries) while slurmrestd or the database are not reachable yet.
type lazyJob struct {
	name  string
	build func(ctx context.Context) (daemon.Job, error)
	mu    sync.Mutex
	job   daemon.Job
}

func (l *lazyJob) Name() string { return l.name }

func (l *lazyJob) Run(ctx context.Context) error {
	l.mu.Lock()
	if l.job == nil {
		j, err := l.build(ctx)
		if err != nil {
			l.mu.Unlock()
			return err
		}
		l.job = j
	}
	j := l.job
	l.mu.Unlock()
	return j.Run(ctx)
}

// fileTenants reads tenants from a tenants file (gpubridge apply -f format).
type fileTenants struct{ path string }

func (f fileTenants) List(context.Context) ([]tenant.Tenant, error) {
	b, err := os.ReadFile(f.path)
	if err != nil {
		return nil, err
	}
	file, ps := tenant.ParseFile(b, nil, tenant.Rules{})
	if err := ps.Err(); err != nil {
		return nil, fmt.Errorf("tenants file %s: %w", f.path, err)
	}
	return file.Tenants, nil
}

// burstController wires the controller to slurmrestd, the tenant store (or
// a tenants file), the ledger and the burst tables.
func (a *App) burstController(ctx context.Context, c config.Config, tenantsFile, rateCardFile string) (*burst.Controller, error) {
	cl, err := a.Slurm(ctx)
	if err != nil {
		return nil, err
	}
	db, err := a.DB(ctx)
	if err != nil {
		return nil, err
	}
	var src burst.TenantSource = tenantstore.New(db)
	if tenantsFile != "" {
		src = fileTenants{tenantsFile}
	}
	tenants := burst.SourceTenants{Source: src, QOSPrefix: c.Tenants.QOSPrefix}
	log := a.Logger().With("component", "burst")
	jobs := &slurmjobs.Jobs{Client: cl, Logger: log}
	var rates burst.RateReader = &spend.Source{Ledger: ledger.NewDB(db, log), Cluster: c.Cluster}
	if rateCardFile != "" {
		b, err := os.ReadFile(rateCardFile)
		if err != nil {
			return nil, err
		}
		card, err := pricing.ParseYAML(b)
		if err != nil {
			return nil, fmt.Errorf("rate card %s: %w", rateCardFile, err)
		}
		rates = cardRates{card}
	}
	return &burst.Controller{
		Config: burst.Config{
			PoolPartition: c.Tenants.PoolPartition, OnDemandPartition: c.Tenants.OnDemandPartition,
			OnDemandQOS: c.Tenants.OnDemandQOS,
		},
		Jobs: jobs, Mover: jobs, Tenants: tenants,
		Spend: &spend.Source{Ledger: ledger.NewDB(db, log), Cluster: c.Cluster, TTL: 30 * time.Second,
			Accounts: budgetAccounts(tenants)},
		Rates:  rates,
		Store:  store.New(db, c.Cluster),
		Logger: log,
	}, nil
}

// cardRates prices with a rate card file instead of the stored card.
type cardRates struct{ card pricing.Card }

func (r cardRates) OnDemandRates(_ context.Context, at time.Time) (burst.Rates, error) {
	return spend.RatesFrom(r.card, at), nil
}

// budgetAccounts lists the tenants whose spend matters: those with a budget.
func budgetAccounts(t burst.TenantLister) func(context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) {
		ts, err := t.BurstTenants(ctx)
		if err != nil {
			return nil, err
		}
		out := []string{}
		for _, x := range ts {
			if x.Policy.Budget != nil {
				out = append(out, x.Name)
			}
		}
		return out, nil
	}
}

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
	var killAfter int
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
			if killAfter > 0 {
				// Tests: die by SIGKILL right after the Nth move was written
				// and before it was recorded, as a crash would.
				ctrl.AfterMove = func(n int) {
					if n == killAfter {
						_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
						time.Sleep(time.Minute)
					}
				}
			}
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
	once.Flags().IntVar(&killAfter, "kill-after-moves", 0, "testing: SIGKILL this process right after the Nth move")
	_ = once.Flags().MarkHidden("kill-after-moves")
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

// burstJobRow is one job of `show burst`: bursting now, or refused.
type burstJobRow struct {
	Tenant string    `json:"tenant"`
	JobID  int64     `json:"jobId"`
	User   string    `json:"user"`
	Status string    `json:"status"` // bursting, refused
	State  string    `json:"state"`  // Slurm state
	GPUs   string    `json:"gpus"`
	Since  time.Time `json:"since,omitzero"`
	Reason string    `json:"reason"`
	Detail string    `json:"detail"`
}

// burstTenantRow is one tenant of `show burst`: its policy and position.
type burstTenantRow struct {
	Tenant       string `json:"tenant"`
	Burst        bool   `json:"burst"`
	Cap          int64  `json:"maxOnDemandGPUs"`
	OnDemandGPUs int64  `json:"onDemandGPUs"`
	Budget       string `json:"monthlyBudget,omitempty"`
	Spent        string `json:"spent"`
	InFlight     string `json:"inFlight"`
	Committed    string `json:"committed"`
	Left         string `json:"left,omitempty"`
}

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
			p, err := ctrl.Plan(ctx)
			if err != nil {
				return err
			}
			stored, err := ctrl.Store.(*store.DB).Refusals(ctx, only)
			if err != nil {
				return err
			}
			return a.printBurst(p, stored, only)
		},
	}
	cmd.Flags().StringVar(&tenantsFile, "tenants", "", "read tenants from this tenants file instead of the tenant store")
	cmd.Flags().StringVar(&rateCard, "rate-card", "", "price with this rate card file instead of the stored one")
	return cmd
}

func (a *App) printBurst(p burst.Plan, stored []store.StoredRefusal, only string) error {
	since := map[int64]store.StoredRefusal{}
	for _, s := range stored {
		since[s.JobID] = s
	}
	var jobs []burstJobRow
	for _, b := range p.Bursting {
		if only != "" && b.Tenant != only {
			continue
		}
		r := burstJobRow{Tenant: b.Tenant, JobID: b.JobID, User: b.User, Status: "bursting", State: b.State, GPUs: b.GPUs.String()}
		if b.Moved {
			r.Since, r.Reason = b.Marker.Moved, b.Marker.Reason
			r.Detail = fmt.Sprintf("moved by gpubridge from %s/%s", b.Marker.Partition, b.Marker.QOS)
		} else {
			r.Since, r.Reason, r.Detail = b.StartTime, "submitted", "submitted to the on-demand tier"
		}
		if b.Priced {
			r.Detail += "; est " + burst.FormatMoney(b.Estimate, p.Minor)
		}
		if b.Reason != "" && b.Reason != "None" {
			r.Detail += "; pending: " + b.Reason
		}
		jobs = append(jobs, r)
	}
	for _, x := range p.Refusals {
		if only != "" && x.Tenant != only {
			continue
		}
		r := burstJobRow{Tenant: x.Tenant, JobID: x.JobID, User: x.User, Status: "refused", State: "PENDING",
			GPUs: x.GPUs.String(), Reason: string(x.Reason), Detail: x.Detail}
		if s, ok := since[x.JobID]; ok && s.Reason == x.Reason {
			r.Since = s.FirstAt
		}
		jobs = append(jobs, r)
	}
	// Move failures are only known to the cycle that tried: show stored ones.
	for _, s := range stored {
		if s.Reason == burst.MoveFailed && !slices.ContainsFunc(jobs, func(r burstJobRow) bool { return r.JobID == s.JobID }) {
			jobs = append(jobs, burstJobRow{Tenant: s.Tenant, JobID: s.JobID, User: s.User, Status: "refused", State: "PENDING",
				GPUs: s.GPUs, Since: s.FirstAt, Reason: string(s.Reason), Detail: s.Detail})
		}
	}
	var tenants []burstTenantRow
	for _, t := range p.Tenants {
		if only != "" && t.Tenant != only {
			continue
		}
		r := burstTenantRow{Tenant: t.Tenant, Burst: t.Enabled, Cap: t.MaxGPUs, OnDemandGPUs: t.OnDemandGPUs + t.MovedGPUs,
			Spent: burst.FormatMoney(t.Spent, p.Minor), InFlight: burst.FormatMoney(t.InFlight, p.Minor),
			Committed: burst.FormatMoney(t.Committed(), p.Minor)}
		if t.Budget != nil {
			r.Budget = burst.FormatMoney(*t.Budget, p.Minor)
			r.Left = burst.FormatMoney(*t.Budget-t.Committed(), p.Minor)
		}
		if t.Unpriced != "" {
			r.InFlight += " (+" + t.Unpriced + " unpriced)"
		}
		tenants = append(tenants, r)
	}
	if only != "" && len(tenants) == 0 {
		return fmt.Errorf("no tenant %q", only)
	}
	if jobs == nil {
		jobs = []burstJobRow{}
	}
	if tenants == nil {
		tenants = []burstTenantRow{}
	}
	if a.output.JSON {
		return a.Print(table.Table{Raw: struct {
			Jobs    []burstJobRow    `json:"jobs"`
			Tenants []burstTenantRow `json:"tenants"`
		}{jobs, tenants}})
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

// configSpecFlags are the flags of `config render` and `config check`.
type configSpecFlags struct {
	nodes, types string
	poolTier     int
	odTier       int
	odQOS        string
}

func (f *configSpecFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.nodes, "nodes", "", "GPU nodes of both partitions (default: the nodes with GPUs, from slurmrestd)")
	cmd.Flags().StringVar(&f.types, "gpu-types", "", "typed GPUs to track (default: the types the nodes report)")
	cmd.Flags().IntVar(&f.poolTier, "pool-tier", 10, "PriorityTier of the pool partition")
	cmd.Flags().IntVar(&f.odTier, "ondemand-tier", 1, "PriorityTier of the on-demand partition")
	cmd.Flags().StringVar(&f.odQOS, "ondemand-partition-qos", "", "partition QOS of the on-demand partition (only for the submit-time route)")
}

// spec builds the render spec from flags, reading what they leave out from
// slurmrestd.
func (f *configSpecFlags) spec(ctx context.Context, a *App, c config.Config) (slurmconf.Spec, error) {
	s := slurmconf.Spec{
		PoolPartition: c.Tenants.PoolPartition, OnDemandPartition: c.Tenants.OnDemandPartition,
		Nodes: kv.List(f.nodes), GPUTypes: kv.List(f.types), PoolTier: f.poolTier, OnDemandTier: f.odTier,
		OnDemandPartitionQOS: f.odQOS, PoolDefault: true,
	}
	if len(s.Nodes) > 0 && len(s.GPUTypes) > 0 {
		return s, nil
	}
	cl, err := a.Slurm(ctx)
	if err != nil {
		return s, fmt.Errorf("%w (or give --nodes and --gpu-types)", err)
	}
	nodes, err := cl.ListNodes(ctx)
	if err != nil {
		return s, err
	}
	var names, types []string
	for _, n := range nodes {
		gpus := n.GPUs()
		if len(gpus) == 0 {
			continue
		}
		names = append(names, n.Name)
		for _, g := range gpus {
			if g.Type != "" && !slices.Contains(types, g.Type) {
				types = append(types, g.Type)
			}
		}
	}
	slices.Sort(names)
	slices.Sort(types)
	if len(s.Nodes) == 0 {
		s.Nodes = names
	}
	if len(s.GPUTypes) == 0 {
		s.GPUTypes = types
	}
	return s, nil
}

func configRenderCmd(a *App) *cobra.Command {
	var f configSpecFlags
	cmd := &cobra.Command{
		Use:   "render",
		Short: "Print the slurm.conf fragment of the two tiers (pool, on-demand), preemption and typed GPU TRES",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.Config()
			if err != nil {
				return err
			}
			s, err := f.spec(cmd.Context(), a, c)
			if err != nil {
				return err
			}
			frag, err := slurmconf.Render(s)
			if err != nil {
				return err
			}
			if a.output.JSON {
				return a.Print(table.Table{Raw: frag})
			}
			_, err = fmt.Fprint(a.out, frag.Text)
			return err
		},
	}
	f.add(cmd)
	return cmd
}

// errCheckFailed makes `config check` exit 1 after printing its findings.
var errCheckFailed = errors.New("the cluster's configuration differs from gpubridge's (see above)")

func configCheckCmd(a *App) *cobra.Command {
	var f configSpecFlags
	var scontrol string
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Compare the live cluster with the rendered two-tier configuration",
		Long: `check renders the fragment (as config render does) and compares it with
what the cluster reports: scontrol show config and scontrol show partition
(run with --scontrol, default "scontrol"), or, where scontrol is not
available, slurmrestd's partitions (PreemptType and the global keys are then
unknown). It exits 1 when a setting differs or is missing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			c, err := a.Config()
			if err != nil {
				return err
			}
			s, err := f.spec(ctx, a, c)
			if err != nil {
				return err
			}
			frag, err := slurmconf.Render(s)
			if err != nil {
				return err
			}
			live, src, err := a.liveSlurmConf(ctx, scontrol)
			if err != nil {
				return err
			}
			fs := slurmconf.Check(frag, live)
			t := table.Table{Header: []string{"Partition", "Key", "Want", "Got", "Status"}, Raw: fs}
			for _, x := range fs {
				t.Rows = append(t.Rows, []string{x.Partition, x.Key, x.Want, x.Got, string(x.Status)})
			}
			if err := a.Print(t); err != nil {
				return err
			}
			a.Logger().Debug("live configuration read", "source", src)
			if slices.ContainsFunc(fs, func(x slurmconf.Finding) bool { return x.Status == slurmconf.Differs || x.Status == slurmconf.Missing }) {
				return errCheckFailed
			}
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&scontrol, "scontrol", "scontrol", "command that runs scontrol, split on spaces (e.g. \"ssh head scontrol\"); empty reads slurmrestd only")
	return cmd
}

// liveSlurmConf reads the cluster's configuration with scontrol, else
// slurmrestd.
func (a *App) liveSlurmConf(ctx context.Context, scontrol string) (slurmconf.Live, string, error) {
	if argv := strings.Fields(scontrol); len(argv) > 0 {
		cfg, err1 := runOut(ctx, argv, "show", "config")
		parts, err2 := runOut(ctx, argv, "show", "partition")
		if err1 == nil && err2 == nil {
			return slurmconf.Live{Config: slurmconf.ParseShowConfig(cfg), Partitions: slurmconf.ParseShowPartitions(parts)}, scontrol, nil
		}
		a.Logger().Warn("scontrol not usable; reading partitions from slurmrestd (global keys unknown)", "err", errors.Join(err1, err2))
	}
	cl, err := a.Slurm(ctx)
	if err != nil {
		return slurmconf.Live{}, "", err
	}
	ps, err := cl.ListPartitions(ctx)
	if err != nil {
		return slurmconf.Live{}, "", err
	}
	return restPartitions(ps), "slurmrestd", nil
}

func restPartitions(ps []slurmrest.Partition) slurmconf.Live {
	live := slurmconf.Live{Partitions: map[string]map[string]string{}, Partial: true}
	for _, p := range ps {
		m := map[string]string{"Nodes": p.Nodes, "PriorityTier": strconv.Itoa(p.PriorityTier), "State": strings.Join(p.State, ",")}
		if p.QOS != "" {
			m["QoS"] = p.QOS
		}
		live.Partitions[p.Name] = m
	}
	return live
}

func runOut(ctx context.Context, argv []string, args ...string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(cctx, argv[0], append(argv[1:], args...)...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("%s %s: %w: %s", strings.Join(argv, " "), strings.Join(args, " "), err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return string(out), nil
}
