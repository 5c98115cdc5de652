package app

import (
	"context"
	"fmt"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/bridge/health/credit"
	"github.com/gpubridge/gpubridge/bridge/health/credit/ledgeradapter"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
)

// CreditSetup builds the node health credit job of a configuration
// (health.credits) over the ledger: the CLI's `credit run-once` and the
// daemon's schedules.healthCredits share it.
type CreditSetup struct {
	Config   config.Config
	Ledger   ledgeradapter.CreditLedger
	Cards    billing.CardReader
	Labels   billing.LabelSource
	Health   ledgeradapter.HealthEvents
	Observer credit.Observer
	// Cluster names the cluster and opens where the end states are read:
	// slurm_acct_db when slurmdb.dsn is set (as the ingest), else
	// slurmrestd.
	Cluster *clients.Cluster
	// Booked lists the bookings' placements (the booked GPU-hours lost on
	// a held node are credited); nil credits no booking.
	Booked ledgeradapter.BookedPlacements
}

// Job returns the credit job. health.credits.minLoss is counted in the
// current rate card's currency (refused when it has more decimals than
// the currency).
func (s CreditSetup) Job(ctx context.Context) (*credit.Job, error) {
	h := s.Config.Health.Credits
	min, err := h.MinLossAmount()
	if err != nil {
		return nil, fmt.Errorf("health.credits.minLoss: %w", err)
	}
	card, ok, err := s.Cards.Current(ctx)
	if err != nil {
		return nil, err
	}
	var units int64
	if ok {
		m, err := min.In(card.Unit())
		if err != nil {
			return nil, fmt.Errorf("health.credits.minLoss %s in the rate card's %s: %w", h.MinLoss, card.Unit(), err)
		}
		units = m.Units()
	}
	cluster, err := s.Cluster.Name(ctx)
	if err != nil {
		return nil, err
	}
	var ends billing.RunEnds
	if src, _ := (IngestSetup{Config: s.Config}).Source(""); src == SourceSlurmDB {
		db, err := s.Cluster.SlurmDB(ctx)
		if err != nil {
			return nil, err
		}
		ends = billing.SlurmDBEnds{DB: db, Cluster: cluster}
	} else {
		cl, err := s.Cluster.Slurm(ctx)
		if err != nil {
			return nil, err
		}
		ends = billing.RESTEnds{Slurm: cl, Cluster: cluster}
	}
	return &credit.Job{
		Source: ledgeradapter.CreditSource{Cluster: cluster, Ledger: s.Ledger, Cards: s.Cards, Labels: s.Labels, Ends: ends, Health: s.Health, Booked: s.Booked},
		Ledger: ledgeradapter.CreditWriter{Cluster: cluster, Ledger: s.Ledger},
		Policy: credit.Policy{Enabled: h.Enabled, MinUnits: units, KillWindow: h.KillWindow.Duration},
		// Lookback as configured; Observer may be nil.
		Lookback: h.Lookback.Duration, Observer: s.Observer,
	}, nil
}
