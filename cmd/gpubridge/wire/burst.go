package wire

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/burst/slurmjobs"
	"github.com/gpubridge/gpubridge/bridge/burst/spend"
	"github.com/gpubridge/gpubridge/bridge/burst/store"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
)

// BurstOptions is what Burst assembles the controller from.
type BurstOptions struct {
	// Config gives the tenants.* naming (QOS prefix, pool and on-demand
	// partitions, on-demand QOS).
	Config config.Config
	// Cluster is the cluster's name (cmd/gpubridge/clients.Cluster): the
	// ledger's and the burst tables' rows are keyed by it.
	Cluster string
	// Slurm reads and moves jobs (a *slurmrest.Client).
	Slurm slurmjobs.Client
	// DB is gpubridge's database, migrated (sqldb.OpenMigrated): tenant
	// store, ledger and burst tables.
	DB     *sqlx.DB
	Logger *slog.Logger
	// TenantsFile, when set, reads the tenants from this tenants file
	// (gpubridge apply -f format) instead of the tenant store.
	TenantsFile string
	// RateCardFile, when set, prices with this rate card file instead of
	// the stored one.
	RateCardFile string
}

// BurstRefusalReader reads the refusals the last cycle stored (store.DB).
type BurstRefusalReader interface {
	Refusals(ctx context.Context, tenant string) ([]burst.StoredRefusal, error)
}

var _ BurstRefusalReader = (*store.DB)(nil)

// BurstService is the burst controller (its Run is the daemon job, its Cycle
// `burst run-once`, its Plan `--dry-run`) with the reads `show burst`
// needs.
type BurstService struct {
	*burst.Controller
	Stored BurstRefusalReader
}

// Burst wires the controller to slurmrestd, the tenant store (or a tenants
// file), the ledger (or a rate card file) and the burst tables. It reads
// the rate card file, if any; it opens no connection.
func Burst(o BurstOptions) (*BurstService, error) {
	c, db, log := o.Config, o.DB, o.Logger
	var src burst.TenantSource = tenantstore.New(db)
	if o.TenantsFile != "" {
		src = BurstFileTenants{o.TenantsFile}
	}
	tenants := burst.SourceTenants{Source: src, QOSPrefix: c.Tenants.QOSPrefix}
	jobs := &slurmjobs.Jobs{Client: o.Slurm, Logger: log}
	var rates burst.RateReader = &spend.Source{Ledger: ledger.NewDB(db, log), Cards: ratecard.NewDB(db), Cluster: o.Cluster}
	if rateCardFile := o.RateCardFile; rateCardFile != "" {
		b, err := os.ReadFile(rateCardFile)
		if err != nil {
			return nil, err
		}
		card, err := pricing.ParseYAML(b)
		if err != nil {
			return nil, fmt.Errorf("rate card %s: %w", rateCardFile, err)
		}
		rates = spend.CardRates{Card: card}
	}
	st := store.New(db, o.Cluster)
	return &BurstService{
		Controller: &burst.Controller{
			Config: burst.Config{
				PoolPartition: c.Tenants.PoolPartition, OnDemandPartition: c.Tenants.OnDemandPartition,
				OnDemandQOS: c.Tenants.OnDemandQOS,
			},
			Jobs: jobs, Mover: jobs, Tenants: tenants,
			Spend: &spend.Source{Ledger: ledger.NewDB(db, log), Cards: ratecard.NewDB(db), Cluster: o.Cluster, TTL: 30 * time.Second,
				Accounts: burst.BudgetAccounts(tenants)},
			Rates:  rates,
			Store:  st,
			Logger: log,
		},
		Stored: st,
	}, nil
}

// Overview is `show burst` of tenant (all tenants when empty): it reads the
// live state, decides without moving anything, and merges the refusals the
// last cycle stored. It writes nothing.
func (s *BurstService) Overview(ctx context.Context, tenant string) (burst.Overview, error) {
	p, err := s.Plan(ctx)
	if err != nil {
		return burst.Overview{}, err
	}
	stored, err := s.Stored.Refusals(ctx, tenant)
	if err != nil {
		return burst.Overview{}, err
	}
	return burst.Summarize(p, stored, tenant)
}

// BurstFileTenants reads the tenants from a tenants file (gpubridge apply -f
// format), on every List: an edit takes effect at the next cycle.
type BurstFileTenants struct{ Path string }

var _ burst.TenantSource = BurstFileTenants{}

// List implements burst.TenantSource.
func (f BurstFileTenants) List(context.Context) ([]tenant.Tenant, error) {
	b, err := os.ReadFile(f.Path)
	if err != nil {
		return nil, err
	}
	file, ps := tenant.ParseFile(b, nil, tenant.Rules{})
	if err := ps.Err(); err != nil {
		return nil, fmt.Errorf("tenants file %s: %w", f.Path, err)
	}
	return file.Tenants, nil
}
