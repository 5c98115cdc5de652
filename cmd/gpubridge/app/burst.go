package app

import (
	"context"

	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/wire"
	"github.com/gpubridge/gpubridge/internal/table"
)

// Burst wires the burst use cases (bridge/burst/service) to slurmrestd
// and the database: the tenant store (or a tenants file), the ledger (or
// a rate card file) and the burst tables.
func (e *Env) Burst(ctx context.Context, tenantsFile, rateCardFile string) (*wire.BurstService, error) {
	k, err := e.on(ctx, true)
	if err != nil {
		return nil, err
	}
	return wire.Burst(wire.BurstOptions{
		Config: k.Config, Cluster: k.Cluster, Slurm: k.Slurm, DB: k.DB, Logger: e.Logger().With("component", "burst"),
		TenantsFile: tenantsFile, RateCardFile: rateCardFile,
	})
}

// BurstRequest is one `burst run-once`.
type BurstRequest struct {
	TenantsFile  string // tenants from this file instead of the tenant store
	RateCardFile string // prices from this rate card file instead of the stored one
	// DryRun decides and moves nothing.
	DryRun bool
	// AfterMove, when set, becomes the controller's AfterMove (tests).
	AfterMove func(n int)
	// What names the writer for the writer lock (the command's path).
	What string
}

// BurstCycle is what one burst cycle (burst run-once) did or, DryRun,
// would do.
type BurstCycle struct {
	Result burst.Result
	DryRun bool
}

// Table is the cycle's table (burst.CycleTable).
func (c BurstCycle) Table() table.Table { return burst.CycleTable(c.Result, c.DryRun) }

// BurstOnce runs one burst cycle now, under the writer lock (a dry run
// only plans, without it). It returns the cycle's result, also when the
// cycle failed part-way, and nil when no cycle ran (the error says why).
func (e *Env) BurstOnce(ctx context.Context, r BurstRequest) (*BurstCycle, error) {
	ctrl, err := e.Burst(ctx, r.TenantsFile, r.RateCardFile)
	if err != nil {
		return nil, err
	}
	if r.DryRun {
		p, err := ctrl.Plan(ctx)
		if err != nil {
			return nil, err
		}
		return &BurstCycle{Result: burst.Result{Plan: p}, DryRun: true}, nil
	}
	ctrl.AfterMove = r.AfterMove
	release, err := e.WriterLockFor(ctx, r.What)
	if err != nil {
		return nil, err
	}
	defer release()
	res, err := ctrl.Cycle(ctx)
	return &BurstCycle{Result: res}, err
}

// BurstView is what show burst shows: the overview and the table= asked
// for (jobs, tenants, or "" for both).
type BurstView struct {
	Overview burst.Overview
	Which    string
}

// BurstViewRequest is show burst: of one tenant when Tenant names one, with
// the table Which asks for (jobs, tenants, or "" for both); TenantsFile
// and RateCardFile, when given, replace the stored tenants and rate card.
type BurstViewRequest struct {
	TenantsFile, RateCardFile string
	Tenant, Which             string
}

// ParseBurst reads show burst's keys: tenant= and table=.
func ParseBurst(where map[string]string) (BurstViewRequest, error) {
	which := where["table"]
	if which != "" && which != "jobs" && which != "tenants" {
		return BurstViewRequest{}, Inputf("table=%s: want jobs or tenants", which)
	}
	return BurstViewRequest{Tenant: where["tenant"], Which: which}, nil
}

// BurstOverview is what is bursting now, what is refused and why, and
// each tenant's on-demand GPUs and spend (show burst), as r asks.
func (e *Env) BurstOverview(ctx context.Context, r BurstViewRequest) (BurstView, error) {
	ctrl, err := e.Burst(ctx, r.TenantsFile, r.RateCardFile)
	if err != nil {
		return BurstView{}, err
	}
	ov, err := ctrl.Overview(ctx, r.Tenant)
	return BurstView{Overview: ov, Which: r.Which}, err
}
