package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	rmetrics "github.com/gpubridge/gpubridge/bridge/reconcile/metrics"
	"github.com/gpubridge/gpubridge/bridge/reconcile/slurmadapter"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantadmin"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/internal/app"
	"github.com/gpubridge/gpubridge/internal/config"
)

// The wiring of the tenant use cases (bridge/tenantadmin) to gpubridge's
// database, slurmrestd, the writer lock and the daemon's metrics, for the
// commands of tenant.go, apply.go and import.go and the daemon's reconcile.

// reconcileJob is the daemon's periodic reconcile (wired in jobs.go): the
// use case apply calls, without a person (no confirmation, never a mass
// deletion). Its backends connect at each run's first use (and again
// after a failed one), so that the daemon starts while slurmrestd or the
// database are not reachable yet.
type reconcileJob struct{ s *tenantadmin.Service }

func (j reconcileJob) Name() string                  { return "reconcile" }
func (j reconcileJob) Run(ctx context.Context) error { return j.s.Reconcile(ctx) }

// reconcileJob is the daemon's reconcile for configuration c, counting
// refusals on rec.
func (a *App) reconcileJob(c config.Config, rec *rmetrics.Recorder) reconcileJob {
	s := a.tenantServiceFor(c, "gpubridge serve (reconcile)", a.guardPath())
	s.Logger = a.Logger().With("component", "reconcile")
	s.Refusals = rec
	return reconcileJob{s}
}

// tenantService wires the tenant use cases for a command; guardPath is
// where apply writes the guard file ("" for none).
func (a *App) tenantService(cmd *cobra.Command, guardPath string) (*tenantadmin.Service, error) {
	c, err := a.Config()
	if err != nil {
		return nil, err
	}
	// No logger: a command prints what the service would log (the plan
	// and its refusal), and its error.
	return a.tenantServiceFor(c, cmd.CommandPath(), guardPath), nil
}

func (a *App) tenantServiceFor(c config.Config, what, guardPath string) *tenantadmin.Service {
	s := &tenantadmin.Service{
		Backends:       tenantBackends{a: a, holder: app.WriterHolder(what)},
		Naming:         tenant.Naming{QOSPrefix: c.Tenants.QOSPrefix, OnDemandQOS: c.Tenants.OnDemandQOS, ReservationQOSSuffix: c.Bookings.ReservationQOSSuffix, ReservationPrefix: c.Bookings.ReservationPrefix},
		Actor:          actor(),
		MaxDeleteShare: c.Reconcile.MaxDeleteShare,
	}
	if guardPath != "" {
		s.WriteGuard = func(b []byte, allowEmpty bool) (bool, error) {
			return slurmadapter.GuardFile{Path: guardPath, AllowEmpty: allowEmpty, Logger: a.Logger()}.Write(b)
		}
	}
	return s
}

// tenantBackends connects the tenant use cases to gpubridge's database,
// slurmrestd and the writer lock, each on first use.
type tenantBackends struct {
	a      *App
	holder string
}

func (b tenantBackends) Store(ctx context.Context) (tenantadmin.Store, error) {
	st, err := b.a.tenantStore(ctx)
	if err != nil {
		return nil, err
	}
	return st, nil
}

func (b tenantBackends) Cluster(ctx context.Context) (tenantadmin.Cluster, error) {
	cl, err := b.a.tenantCluster(ctx)
	if err != nil {
		return nil, err
	}
	return cl, nil
}

func (b tenantBackends) WriterLock(ctx context.Context) (func(), error) {
	return b.a.WriterLock(ctx, b.holder)
}

// tenantStore opens the tenant store on gpubridge's database.
func (a *App) tenantStore(ctx context.Context) (*tenantstore.Store, error) {
	db, err := a.DB(ctx)
	if err != nil {
		return nil, err
	}
	return tenantstore.New(db), nil
}

// tenantCluster is the reconcile adapter over the slurmrestd client,
// reading associations from slurmdbd's database as
// reconcile.readAssociations says.
func (a *App) tenantCluster(ctx context.Context) (*slurmadapter.Adapter, error) {
	cl, err := a.Slurm(ctx)
	if err != nil {
		return nil, err
	}
	ad := slurmadapter.New(cl)
	c, err := a.Config()
	if err != nil {
		return nil, err
	}
	mode := c.Reconcile.ReadAssociations
	if mode == config.ReadAssociationsREST || mode == config.ReadAssociationsAuto && c.SlurmDB.DSN == "" {
		return ad, nil
	}
	db, err := a.SlurmDB(ctx)
	if err != nil {
		if mode == config.ReadAssociationsDatabase {
			return nil, fmt.Errorf("reconcile.readAssociations=database: %w", err)
		}
		a.Logger().Warn("associations are read from slurmrestd: slurmdbd's database is not reachable", "error", err)
		return ad, nil
	}
	var fallback func(error) bool
	if mode == config.ReadAssociationsAuto {
		fallback = func(err error) bool {
			a.Logger().Warn("associations are read from slurmrestd: the read of slurmdbd's database failed (reconcile.readAssociations=auto)", "error", err)
			return true
		}
	}
	return ad.ReadAssociationsFrom(slurmadapter.AssocDB{DB: db}, fallback), nil
}

func actor() string { return app.Actor() }

// tenantErr marks the use cases' input errors as usage errors (exit 2).
func tenantErr(err error) error {
	if errors.Is(err, tenantadmin.ErrInput) {
		return usageError{err}
	}
	return err
}
