package main

import (
	"context"
	"sync"

	"github.com/gpubridge/gpubridge/accounting/jobs"
	"github.com/gpubridge/gpubridge/bridge/burst/metrics"
	"github.com/gpubridge/gpubridge/bridge/health"
	cmetrics "github.com/gpubridge/gpubridge/bridge/health/credit/metrics"
	hmetrics "github.com/gpubridge/gpubridge/bridge/health/metrics"
	rmetrics "github.com/gpubridge/gpubridge/bridge/reconcile/metrics"
	bmetrics "github.com/gpubridge/gpubridge/bridge/reserve/metrics"
	"github.com/gpubridge/gpubridge/bridge/reserve/setup"
	"github.com/gpubridge/gpubridge/internal/app"
	"github.com/gpubridge/gpubridge/internal/clients"
	"github.com/gpubridge/gpubridge/internal/config"
	"github.com/gpubridge/gpubridge/internal/daemon"
)

// daemonJobs is the one place where the daemon's periodic jobs and its
// readiness checks are wired. It is made once per `serve`; Jobs and Checks
// are called for each configuration (at start and at every reload).
type daemonJobs struct {
	a         *App
	burst     *metrics.Recorder  // registered once per process
	reconcile *rmetrics.Recorder // likewise
	api       *app.API           // likewise: the tenant API's metrics
	bookings  *bmetrics.Recorder // likewise
	credits   *cmetrics.Recorder // likewise
	health    *hmetrics.Recorder // likewise
}

func newDaemonJobs(a *App) *daemonJobs {
	return &daemonJobs{a: a, burst: metrics.New(a.Registry()), reconcile: rmetrics.New(a.Registry()), api: app.NewAPI(a.Env), bookings: bmetrics.New(a.Registry()),
		credits: cmetrics.New(a.Registry()), health: hmetrics.New(a.Registry())}
}

// Jobs makes the jobs of configuration c on its clients. Nothing connects
// here: each job builds its clients at its first run (daemon.Lazy).
func (d *daemonJobs) Jobs(c config.Config, set *clients.Set) ([]daemon.Scheduled, error) {
	a := d.a.withClients(c, set)
	return append([]daemon.Scheduled{
		{Spec: c.Schedules.Reconcile, Job: daemon.Lazy("reconcile", func(ctx context.Context) (daemon.Job, error) {
			j := a.ReconcileJob(c, d.reconcile)
			j.Service.Drift = d.api.Metrics.ObserveReconcile
			return j, nil
		})},
		{Spec: c.Schedules.Burst, Job: daemon.Lazy("burst", func(ctx context.Context) (daemon.Job, error) {
			ctrl, err := a.Burst(ctx, "", "")
			if err != nil {
				return nil, err
			}
			ctrl.Recorder = d.burst
			return app.LockedJob{Env: a.Env, What: "gpubridge serve (burst)", Job: ctrl}, nil
		})},
		{Spec: c.Schedules.Bookings, Job: daemon.Lazy("bookings", func(ctx context.Context) (daemon.Job, error) {
			p, err := a.Projector(ctx, "gpubridge serve")
			if err != nil {
				return nil, err
			}
			p.Logger = a.Logger().With("component", "bookings")
			return app.LockedJob{Env: a.Env, What: "gpubridge serve (bookings)", Job: setup.Job{Projector: p, Recorder: d.bookings}}, nil
		})},
		{Spec: c.Schedules.Ingest, Job: daemon.Lazy("ingest", func(ctx context.Context) (daemon.Job, error) {
			in, err := a.Ingester(ctx, "")
			if err != nil {
				return nil, err
			}
			return &jobs.Ingest{Ingester: in}, nil
		})},
		{Spec: c.Schedules.ClosePeriod, Job: daemon.Lazy("close-period", func(ctx context.Context) (daemon.Job, error) {
			cl, err := a.Closer(ctx)
			if err != nil {
				return nil, err
			}
			if cl.Reader, err = a.Ingester(ctx, ""); err != nil {
				return nil, err
			}
			if cl.Charger, err = a.BookingCharger(ctx); err != nil {
				return nil, err
			}
			return &jobs.ClosePeriod{Closer: cl, Actor: "gpubridge serve", Log: a.Logger().With("component", "close-period")}, nil
		})},
		{Spec: app.CreditsSpec(c), Job: daemon.Lazy("health-credits", func(ctx context.Context) (daemon.Job, error) {
			return a.CreditJob(ctx, c, d.credits)
		})},
		{Spec: c.Schedules.BookingCharges, Job: daemon.Lazy("booking-charges", func(ctx context.Context) (daemon.Job, error) {
			ch, err := a.BookingCharger(ctx)
			if err != nil {
				return nil, err
			}
			return &jobs.BookingCharges{Charger: ch, Log: a.Logger().With("component", "booking-charges")}, nil
		})},
	}, d.healthJobs(a, c)...), nil
}

// healthJobs are the node health jobs (bridge/health), when health.nodes
// lists nodes: one cycle per health schedule on its own spec
// (health-acceptance, health-quick, ...) and health-harvest on
// schedules.health, all over one service (built at the first run).
func (d *daemonJobs) healthJobs(a *App, c config.Config) []daemon.Scheduled {
	if len(c.Health.Nodes) == 0 {
		return nil
	}
	var mu sync.Mutex
	var svc *health.Service
	service := func(ctx context.Context) (*health.Service, error) {
		mu.Lock()
		defer mu.Unlock()
		if svc != nil {
			return svc, nil
		}
		s, err := a.HealthWith(ctx, d.health, d.bookings)
		if err == nil {
			svc = s
		}
		return s, err
	}
	var out []daemon.Scheduled
	for _, s := range append([]config.HealthSchedule{c.Health.Acceptance}, c.Health.Schedules...) {
		name := s.Name
		out = append(out, daemon.Scheduled{Spec: s.Spec, Job: daemon.Lazy("health-"+name, func(ctx context.Context) (daemon.Job, error) {
			svc, err := service(ctx)
			if err != nil {
				return nil, err
			}
			return svc.Job(name)
		})})
	}
	return append(out, daemon.Scheduled{Spec: c.Schedules.Health, Job: daemon.Lazy("health-harvest", func(ctx context.Context) (daemon.Job, error) {
		svc, err := service(ctx)
		if err != nil {
			return nil, err
		}
		return daemon.Func("health-harvest", func(ctx context.Context) error {
			_, err := svc.Harvest(ctx)
			return err
		}), nil
	})})
}

// Checks are the readiness probes of c (app.ReadinessChecks).
func (d *daemonJobs) Checks(c config.Config, set *clients.Set) []daemon.Check {
	return app.ReadinessChecks(c, set)
}
