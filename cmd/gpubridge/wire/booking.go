package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/metrics"
	"github.com/gpubridge/gpubridge/bridge/reserve/slurmadapter"
	"github.com/gpubridge/gpubridge/bridge/reserve/store"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

// BookingSettings turns the configuration into reserve.Settings.
func BookingSettings(c config.Config) reserve.Settings {
	b := c.Bookings
	p := b.DefaultPolicy
	return reserve.Settings{
		Prefix: b.ReservationPrefix, LeadTime: b.LeadTime.Duration, UnbookablePercent: b.UnbookablePercent, NodeClasses: b.NodeClasses,
		DefaultPolicy: reserve.Policy{MaxGPUs: p.MaxGPUs, MaxWindow: reserve.Span(p.MaxWindow.Duration), MinLead: reserve.Span(p.MinLead.Duration), MaxHorizon: reserve.Span(p.MaxHorizon.Duration)},
	}
}

// BookingTenants is reserve.Tenants over the tenant store: a tenant's booking
// policy (its spec's keys over the default) and its quota's GPU types.
type BookingTenants struct {
	Store   *tenantstore.Store
	Default reserve.Policy
}

var _ reserve.Tenants = BookingTenants{}

// BookingTenant is the booking view of tenant name; an unknown tenant, or
// one being deleted, is reserve.ErrUnknownTenant.
func (t BookingTenants) BookingTenant(ctx context.Context, name string) (reserve.TenantInfo, error) {
	tn, err := t.Store.Get(ctx, name)
	switch {
	case errors.Is(err, tenantstore.ErrNotFound):
		return reserve.TenantInfo{}, fmt.Errorf("tenant %q: %w", name, reserve.ErrUnknownTenant)
	case err != nil:
		return reserve.TenantInfo{}, err
	case tn.IsDeleting():
		return reserve.TenantInfo{}, fmt.Errorf("tenant %q is being deleted: %w", name, reserve.ErrUnknownTenant)
	}
	types := tn.GPUs.Types()
	if types == nil {
		types = []string{}
	}
	quota := make(map[string]int, len(tn.GPUs))
	for typ, n := range tn.GPUs {
		quota[typ] = int(min(n, math.MaxInt32))
	}
	return reserve.TenantInfo{Policy: tn.Bookings.Over(t.Default), Own: !tn.Bookings.IsZero(), GPUTypes: types, Quota: quota}, nil
}

// BookingParams are what the booking use cases are built on.
type BookingParams struct {
	Config config.Config
	DB     *sqlx.DB
	// Cluster names the cluster of the booking store (the cluster
	// handle's name: cmd/gpubridge/clients.Cluster).
	Cluster string
	// Slurm, when set, is the Service's Source and the projector's Slurm;
	// without it the Service reads and writes the store only (show and
	// cancel bookings, maintenance windows).
	Slurm *slurmrest.Client
}

// Bookings are the booking use cases of a configuration.
type Bookings struct {
	Service *reserve.Service
	Store   *store.DB
	Slurm   *slurmadapter.Adapter // nil without BookingParams.Slurm
}

// NewBookings builds the booking use cases of p.
func NewBookings(p BookingParams) Bookings {
	st := store.New(p.DB, p.Cluster)
	set := BookingSettings(p.Config)
	b := Bookings{Store: st, Service: &reserve.Service{Store: st, Tenants: BookingTenants{Store: tenantstore.New(p.DB), Default: set.DefaultPolicy}, Settings: set}}
	if p.Slurm != nil {
		b.Slurm = slurmadapter.New(p.Slurm, p.Config.Tenants.PoolPartition)
		b.Service.Source = b.Slurm
	}
	return b
}

// Projector is the booking projector for actor (the reconcile step the
// daemon schedules and `gpubridge project` runs); b needs its Slurm.
func (b Bookings) Projector(actor string) *reserve.Projector {
	return &reserve.Projector{Store: b.Store, Slurm: b.Slurm, Settings: b.Service.Settings, Actor: actor}
}

// BookingJob is the daemon's projection of bookings onto Slurm reservations,
// recording each run's report as metrics and logging the bookings at risk.
type BookingJob struct {
	Projector *reserve.Projector
	Recorder  *metrics.Recorder // optional
}

// Name is the job's name in the daemon's schedule and metrics.
func (j BookingJob) Name() string { return "bookings" }

// Run projects once.
func (j BookingJob) Run(ctx context.Context) error {
	rep, err := j.Projector.Project(ctx)
	if j.Recorder != nil {
		j.Recorder.Observe(rep, err)
	}
	log := j.Projector.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for _, b := range rep.AtRisk {
		log.Warn("booking at risk", "booking", b.ID, "tenant", b.Tenant, "gpus", b.What(), "why", b.Note)
	}
	return err
}

// OpenBookings checks p.Config's booking settings, then builds the
// booking use cases on p (NewBookings): a configuration whose settings
// are wrong is refused with what to fix before anything is used.
func OpenBookings(p BookingParams) (Bookings, error) {
	if err := BookingSettings(p.Config).Validate().Err(); err != nil {
		return Bookings{}, err
	}
	return NewBookings(p), nil
}
