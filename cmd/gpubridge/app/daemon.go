package app

import (
	"context"
	"fmt"

	"github.com/gpubridge/gpubridge/accounting/jobs"
	"github.com/gpubridge/gpubridge/bridge/burst/metrics"
	cmetrics "github.com/gpubridge/gpubridge/bridge/health/credit/metrics"
	hmetrics "github.com/gpubridge/gpubridge/bridge/health/metrics"
	rmetrics "github.com/gpubridge/gpubridge/bridge/reconcile/metrics"
	bmetrics "github.com/gpubridge/gpubridge/bridge/reserve/metrics"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/daemon"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/wire"
)

// ServeConfig is serve's configuration loader (daemon.Options.Load): the
// configuration read afresh (at start and at every SIGHUP), with --listen
// (listen, "" for none) over server.listen and --init (initDB) or
// database.init, validated.
func (e *Env) ServeConfig(listen string, initDB bool) func() (config.Config, error) {
	return func() (config.Config, error) {
		c, err := e.LoadConfig()
		if err != nil {
			return c, err
		}
		if listen != "" {
			c.Server.Listen = listen
		}
		c.Database.Init = c.Database.Init || initDB
		return c, c.Validate()
	}
}

// ReadinessChecks are the daemon's readiness probes of c: gpubridge's
// database always (the leader lock lives there); slurmrestd when a job
// needs it or it must name the cluster; slurm_acct_db when ingest reads
// it.
func ReadinessChecks(c config.Config, set *clients.Set) []daemon.Check {
	checks := []daemon.Check{{Name: clients.NameDatabase, Run: set.CheckDB}}
	acct := c.Schedules.Ingest != "" || c.Schedules.ClosePeriod != ""
	source, _ := wire.IngestSource(c, "")
	if c.Schedules.Reconcile != "" || c.Schedules.Burst != "" || c.Schedules.Bookings != "" || len(c.Health.Nodes) > 0 || !clients.NamesCluster(c) || ((acct || CreditsSpec(c) != "") && source == wire.SourceSlurmrestd) {
		checks = append(checks, daemon.Check{Name: clients.NameSlurmRest, Run: set.CheckSlurm})
	}
	if (acct || CreditsSpec(c) != "") && source == wire.SourceSlurmDB { // the credit job reads how runs ended there too
		checks = append(checks, daemon.Check{Name: clients.NameSlurmDB, Run: set.CheckSlurmDB})
	}
	return checks
}

// CreditsSpec is the credit job's schedule: none while health.credits is
// off.
func CreditsSpec(c config.Config) string {
	if !c.Health.Credits.Enabled {
		return ""
	}
	return c.Schedules.HealthCredits
}

// Serve runs the daemon (gpubridge serve) until ctx ends: the periodic
// jobs of DaemonJobs while this replica holds the leader lock, the tenant
// API, status page, /metrics, /healthz and /readyz, and SIGHUP reloads
// (cmd/gpubridge/daemon). listen and initDB are --listen and --init
// (ServeConfig).
func (e *Env) Serve(ctx context.Context, listen string, initDB bool) error {
	e.Daemon = true // logs at info, before anything builds the logger
	jobs := NewDaemonJobs(e)
	return daemon.Run(ctx, daemon.Options{
		Load:     e.ServeConfig(listen, initDB),
		Jobs:     jobs.Jobs,
		Checks:   jobs.Checks,
		App:      jobs.API.App,
		Clients:  clients.Options{Logger: e.Logger()},
		Registry: e.Registry(),
		Logger:   e.Logger(),
	})
}

// DaemonJobs is the one place where the daemon's periodic jobs and its
// readiness checks are wired. It is made once per `serve`
// (NewDaemonJobs); Jobs and Checks are called for each configuration (at
// start and at every reload).
type DaemonJobs struct {
	env       *Env
	burst     *metrics.Recorder  // registered once per process
	reconcile *rmetrics.Recorder // likewise
	API       *API               // likewise: the tenant API's metrics
	bookings  *bmetrics.Recorder // likewise
	credits   *cmetrics.Recorder // likewise
	health    *hmetrics.Recorder // likewise
}

// NewDaemonJobs makes the daemon's jobs on e, registering their metrics
// on e's registry.
func NewDaemonJobs(e *Env) *DaemonJobs {
	return &DaemonJobs{env: e, burst: metrics.New(e.Registry()), reconcile: rmetrics.New(e.Registry()), API: NewAPI(e), bookings: bmetrics.New(e.Registry()),
		credits: cmetrics.New(e.Registry()), health: hmetrics.New(e.Registry())}
}

// Jobs makes the jobs of configuration c on its clients, once the
// generation resolved its cluster's name: plain values, built now, which
// connect nothing before their first run. A job that cannot be built (a
// configuration it needs is missing) fails each run with why, and the
// others run.
func (d *DaemonJobs) Jobs(ctx context.Context, c config.Config, set *clients.Set) ([]daemon.Scheduled, error) {
	e := d.env.WithClients(c, set)
	rec := e.ReconcileJob(c, d.reconcile)
	rec.Service.Drift = d.API.Metrics.ObserveReconcile
	return append([]daemon.Scheduled{
		{Spec: c.Schedules.Reconcile, Job: rec},
		{Spec: c.Schedules.Burst, Job: built("burst", func() (daemon.Job, error) {
			ctrl, err := e.Burst(ctx, "", "")
			if err != nil {
				return nil, err
			}
			ctrl.Recorder = d.burst
			return LockedJob{Env: e, What: "gpubridge serve (burst)", Job: ctrl}, nil
		})},
		{Spec: c.Schedules.Bookings, Job: built("bookings", func() (daemon.Job, error) {
			p, err := e.Projector(ctx, "gpubridge serve")
			if err != nil {
				return nil, err
			}
			p.Logger = e.Logger().With("component", "bookings")
			return LockedJob{Env: e, What: "gpubridge serve (bookings)", Job: wire.BookingJob{Projector: p, Recorder: d.bookings}}, nil
		})},
		{Spec: c.Schedules.Ingest, Job: built("ingest", func() (daemon.Job, error) {
			in, err := e.Ingester(ctx, "")
			return &jobs.Ingest{Ingester: in}, err
		})},
		{Spec: c.Schedules.ClosePeriod, Job: built("close-period", func() (daemon.Job, error) { return d.closePeriod(ctx, e) })},
		{Spec: CreditsSpec(c), Job: built("health-credits", func() (daemon.Job, error) { return e.CreditJob(ctx, c, d.credits) })},
		{Spec: c.Schedules.BookingCharges, Job: built("booking-charges", func() (daemon.Job, error) {
			ch, err := e.BookingCharger(ctx)
			return &jobs.BookingCharges{Charger: ch, Log: e.Logger().With("component", "booking-charges")}, err
		})},
	}, d.healthJobs(ctx, e, c)...), nil
}

// built is the job build makes or, when it fails, a job of that name
// whose every run fails with why (its runs count as errors and log it).
func built(name string, build func() (daemon.Job, error)) daemon.Job {
	j, err := build()
	if err != nil {
		err = fmt.Errorf("%s cannot run: %w", name, err)
		return daemon.Func(name, func(context.Context) error { return err })
	}
	return j
}

// closePeriod is the close-period job: the closer, re-reading the period
// through the ingester and charging the bookings first.
func (d *DaemonJobs) closePeriod(ctx context.Context, e *Env) (daemon.Job, error) {
	cl, err := e.Closer(ctx)
	if err != nil {
		return nil, err
	}
	if cl.Reader, err = e.Ingester(ctx, ""); err != nil {
		return nil, err
	}
	if cl.Charger, err = e.BookingCharger(ctx); err != nil {
		return nil, err
	}
	return &jobs.ClosePeriod{Closer: cl, Actor: "gpubridge serve", Log: e.Logger().With("component", "close-period")}, nil
}

// healthJobs are the node health jobs (bridge/health), when health.nodes
// lists nodes: one cycle per health schedule on its own spec
// (health-acceptance, health-quick, ...) and health-harvest on
// schedules.health, all over one service.
func (d *DaemonJobs) healthJobs(ctx context.Context, e *Env, c config.Config) []daemon.Scheduled {
	if len(c.Health.Nodes) == 0 {
		return nil
	}
	svc, err := e.HealthWith(ctx, d.health, d.bookings)
	var out []daemon.Scheduled
	for _, s := range append([]config.HealthSchedule{c.Health.Acceptance}, c.Health.Schedules...) {
		out = append(out, daemon.Scheduled{Spec: s.Spec, Job: built("health-"+s.Name, func() (daemon.Job, error) {
			if err != nil {
				return nil, err
			}
			return svc.Job(s.Name)
		})})
	}
	return append(out, daemon.Scheduled{Spec: c.Schedules.Health, Job: built("health-harvest", func() (daemon.Job, error) {
		return daemon.Func("health-harvest", func(ctx context.Context) error {
			_, err := svc.Harvest(ctx)
			return err
		}), err
	})})
}

// Checks are the readiness probes of c (ReadinessChecks).
func (d *DaemonJobs) Checks(c config.Config, set *clients.Set) []daemon.Check {
	return ReadinessChecks(c, set)
}
