package app

import (
	"context"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/bridge/health/credit"
	hstore "github.com/gpubridge/gpubridge/bridge/health/store"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/wire"
	"github.com/gpubridge/gpubridge/internal/table"
)

// The node health credits (bridge/health/credit) over the ledger
// (cmd/gpubridge/wire.CreditJob).

// CreditJob builds the credit job of configuration c on the Env's
// connections (wire.CreditJob); obs is the daemon's recorder (nil in
// a command).
func (e *Env) CreditJob(ctx context.Context, c config.Config, obs credit.Observer) (*credit.Job, error) {
	k, err := e.on(ctx, false)
	if err != nil {
		return nil, err
	}
	return wire.CreditJob(ctx, c, k.Handle, wire.CreditPorts{Ledger: ledger.NewDB(k.DB, e.Logger()), Cards: ratecard.NewDB(k.DB), Labels: e.TenantLabels,
		Observer: obs, Health: hstore.New(k.DB, k.Cluster), Booked: e.BookedPlacements})
}

// RunCredits writes the node health credits owed now, once, as the
// daemon's credit job does; lookback, when set (ParseCreditLookback),
// replaces health.credits.lookback. It refuses while health.credits is
// off.
func (e *Env) RunCredits(ctx context.Context, lookback config.Span) (credit.Report, error) {
	c, err := e.Config()
	if err != nil {
		return credit.Report{}, err
	}
	if lookback.Duration > 0 {
		c.Health.Credits.Lookback = lookback
	}
	if !c.Health.Credits.Enabled {
		return credit.Report{}, Inputf("health.credits.enabled is false in the configuration: no credits are written")
	}
	job, err := e.CreditJob(ctx, c, nil)
	if err != nil {
		return credit.Report{}, err
	}
	return job.RunOnce(ctx)
}

// CreditPrintout is what credit run-once prints of rep: its summary on
// stderr, then the credits it wrote.
func CreditPrintout(rep credit.Report, _ table.Options) Printout {
	return Printout{}.Note(credit.Summary(rep)).Table(credit.ReportTable(rep))
}
