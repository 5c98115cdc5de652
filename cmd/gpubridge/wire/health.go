package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/check"
	"github.com/gpubridge/gpubridge/bridge/health/slurmadapter"
	"github.com/gpubridge/gpubridge/bridge/health/store"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/slurmstr"
)

// HealthParams are what the service is built on.
type HealthParams struct {
	Config config.Config
	// Cluster is the cluster's name (cmd/gpubridge/clients.Cluster): the
	// health store's rows are keyed by it.
	Cluster string
	Slurm   *slurmrest.Client
	DB      *sqlx.DB
	Logger  *slog.Logger
	// Observer receives the measurements (bridge/health/metrics; nil: none).
	Observer health.Observer
	// Mover re-projects bookings on nodes held or released (nil: none).
	Mover health.BookingMover
}

// HealthCheck reads the parts of the configuration the service needs before it
// connects: the managed nodes (config.ValidationError when none, or a
// hostlist does not parse) and the check catalog of health.checks (its
// error is about the admin's definitions).
func HealthCheck(c config.Config) ([]string, check.Catalog, error) {
	h := c.Health
	if len(h.Nodes) == 0 {
		return nil, nil, config.ValidationError{{Field: "health.nodes", Msg: "lists no node: gpubridge manages no node's health (see docs/health.md)"}}
	}
	var nodes []string
	for _, expr := range h.Nodes {
		names, err := slurmstr.ExpandHostlist(expr)
		if err != nil {
			return nil, nil, config.ValidationError{{Field: "health.nodes", Msg: fmt.Sprintf("%q: %v", expr, err)}}
		}
		for _, n := range names {
			if !slices.Contains(nodes, n) {
				nodes = append(nodes, n)
			}
		}
	}
	cat, err := HealthCatalog(c)
	if err != nil {
		return nil, nil, err
	}
	return nodes, cat, nil
}

// HealthCatalog is the check catalog of health.checks: the built-ins, overridden
// and extended by the site's definitions (its error names the fields).
func HealthCatalog(c config.Config) (check.Catalog, error) {
	defs := make([]check.Def, 0, len(c.Health.Checks))
	for _, d := range c.Health.Checks {
		def := check.Def{Name: d.Name, Command: d.Command, Timeout: d.Timeout.Duration, Fatal: d.Fatal, Exclusive: d.Exclusive, FailXIDs: d.FailXIDs, Nodes: d.Nodes}
		if d.Thresholds != nil {
			def.Thresholds = check.Thresholds{}
			for model, vals := range d.Thresholds {
				def.Thresholds[model] = map[string]check.Bound{}
				for name, b := range vals {
					def.Thresholds[model][name] = check.Bound{Min: b.Min, Max: b.Max}
				}
			}
		}
		defs = append(defs, def)
	}
	return check.NewCatalog(defs, "health.checks")
}

// HealthSettings are the service's settings of configuration c for nodes.
func HealthSettings(c config.Config, nodes []string) health.Settings {
	h := c.Health
	sched := func(s config.HealthSchedule) health.Schedule {
		return health.Schedule{Name: s.Name, Spec: s.Spec, Checks: s.Checks, WhenIdle: s.WhenIdle}
	}
	s := health.Settings{
		Nodes: nodes, Account: h.Account, User: h.User, QOS: h.QOS, Partition: h.Partition, MaxConcurrent: h.MaxConcurrent,
		Policy:     health.Policy{AcceptancePasses: h.AcceptancePasses, RequalifyPasses: h.RequalifyPasses},
		Acceptance: sched(h.Acceptance), TriggerChecks: h.TriggerChecks, TenantChecksPerHour: h.TenantChecksPerHour,
		StartWait: h.StartWait.Duration, MaxPending: h.MaxPending.Duration, Retention: h.Retention.Duration,
	}
	for _, x := range h.Schedules {
		s.Schedules = append(s.Schedules, sched(x))
	}
	return s
}

// Health builds the service of p.Config for the cluster p.Cluster names,
// over the given managed nodes and catalog (from HealthCheck).
func Health(p HealthParams, nodes []string, cat check.Catalog) (*health.Service, error) {
	c := p.Config
	cluster := p.Cluster
	ad := slurmadapter.New(p.Slurm, c.Health.User)
	ad.BookingPrefix = c.Bookings.ReservationPrefix
	return health.New(health.Params{
		Nodes: ad, Jobs: ad, Outputs: slurmadapter.Files{NodeDir: c.Health.OutputDir, LocalDir: c.Health.LocalOutputDir},
		Store: store.New(p.DB, cluster), Usage: ad, History: ad, Bookings: ad, Catalog: cat, Settings: HealthSettings(c, nodes), Logger: p.Logger,
		Observer: p.Observer, Mover: p.Mover,
	})
}

// ErrNoTenant is a tenant= that names no tenant.
var ErrNoTenant = errors.New("no such tenant (see `gpubridge show tenants`)")

// HealthTenantReader reads a tenant (the tenant store).
type HealthTenantReader interface {
	Get(ctx context.Context, name string) (tenant.Tenant, error)
}

// SpeakFor checks that user may act for the tenant in the health commands
// (check node tenant=, show checks tenant=, show health tenant=): root, or
// one of the tenant's admins.
func SpeakFor(ctx context.Context, st HealthTenantReader, tenantName, user string) error {
	t, err := st.Get(ctx, tenantName)
	if errors.Is(err, tenantstore.ErrNotFound) {
		return fmt.Errorf("tenant=%s: %w", tenantName, ErrNoTenant)
	}
	if err != nil {
		return err
	}
	if user != "root" && !slices.Contains(t.Admins, user) {
		return fmt.Errorf("%s is not an admin of tenant %s (its admins: %s)", user, tenantName, strings.Join(t.Admins, ","))
	}
	return nil
}
