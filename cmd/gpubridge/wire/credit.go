package wire

import (
	"context"
	"fmt"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/bridge/health/credit"
	"github.com/gpubridge/gpubridge/bridge/health/credit/ledgeradapter"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
)

// CreditPorts are what the credit job reads and writes besides the
// cluster: the ledger, the rate cards, the tenants' labels, the health
// events and the bookings' placements.
type CreditPorts struct {
	Ledger   ledgeradapter.CreditLedger
	Cards    billing.CardReader
	Labels   billing.LabelSource
	Health   ledgeradapter.HealthEvents
	Observer credit.Observer
	// Booked lists the bookings' placements (the booked GPU-hours lost on
	// a held node are credited); nil credits no booking.
	Booked ledgeradapter.BookedPlacements
}

// CreditJob returns the node health credit job of configuration c
// (health.credits) for the cluster h over the ledger: the CLI's `credit
// run-once` and the daemon's schedules.healthCredits share it. The end
// states are read where the ingest reads: slurm_acct_db when slurmdb.dsn
// is set, else slurmrestd. health.credits.minLoss is compared exactly
// with each loss, in the loss's currency.
func CreditJob(ctx context.Context, c config.Config, h *clients.Cluster, p CreditPorts) (*credit.Job, error) {
	hc := c.Health.Credits
	min, err := hc.MinLossAmount()
	if err != nil {
		return nil, fmt.Errorf("health.credits.minLoss: %w", err)
	}
	cluster, err := h.Name(ctx)
	if err != nil {
		return nil, err
	}
	var ends billing.RunEnds
	if src, _ := IngestSource(c, ""); src == SourceSlurmDB {
		db, err := h.SlurmDB(ctx)
		if err != nil {
			return nil, err
		}
		ends = billing.SlurmDBEnds{DB: db, Cluster: cluster}
	} else {
		cl, err := h.Slurm(ctx)
		if err != nil {
			return nil, err
		}
		ends = billing.RESTEnds{Slurm: cl, Cluster: cluster}
	}
	return &credit.Job{
		Source: ledgeradapter.CreditSource{Cluster: cluster, Ledger: p.Ledger, Cards: p.Cards, Labels: p.Labels, Ends: ends, Health: p.Health, Booked: p.Booked},
		Ledger: ledgeradapter.CreditWriter{Cluster: cluster, Ledger: p.Ledger},
		Policy: credit.Policy{Enabled: hc.Enabled, MinLoss: min, KillWindow: hc.KillWindow.Duration},
		// Lookback as configured; Observer may be nil.
		Lookback: hc.Lookback.Duration, Observer: p.Observer,
	}, nil
}
