package wire

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/bridge/burst/slurmjobs"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/slurmadapter"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/tokenstore"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

// APIParams are what the API of one configuration is built on: the
// connections and the use cases, each a builder called at its first use.
type APIParams struct {
	Config  config.Config
	Logger  *slog.Logger
	Metrics *api.Metrics // registered once per process

	Slurm func(ctx context.Context) (*slurmrest.Client, error)
	DB    func(ctx context.Context) (*sqlx.DB, error)
	// Cluster is the cluster's name (cmd/gpubridge/clients.Cluster.Name):
	// the ledger's watermark is read under it.
	Cluster func(ctx context.Context) (string, error)
	// Bookings builds the booking service with its Source (a fresh read of
	// the cluster): changes admit against it, reads share the cycle's.
	Bookings func(ctx context.Context) (*reserve.Service, error)
	// Cases are the booking use cases on a service (app.BookingCases):
	// what the API's booking routes and snapshot call (nil: the service
	// itself).
	Cases func(*reserve.Service) api.Bookings
	// Burst builds the burst service on the stored tenants and rate card.
	Burst func(ctx context.Context) (*BurstService, error)
	// Usage builds the period view of the billing books.
	Usage func(ctx context.Context) (api.UsageReader, error)
}

// API returns the tenant API's handler (cmd/gpubridge/api) and its
// snapshot loop for `serve`: its ports on the stores and use cases the CLI
// uses (the tenant store, the burst service, the booking service, the
// billing books, the token store, the ledger's ingest watermark), each
// built at its first use, so that nothing connects before a request or
// the snapshot loop needs it. Nothing connects here.
func API(p APIParams) (http.Handler, func(context.Context)) {
	c := p.Config
	every := c.API.RefreshInterval.Duration
	settings := BookingSettings(c)
	jobs, inventory := slurmReads(p)
	writes, reads := bookingServices(p, inventory)
	usage := lazyUsage{clients.NewLazy(p.Usage)}
	live := &api.Live{Interval: every, Logger: p.Logger, Sources: api.Sources{
		Tenants:         lazyTenants{p.DB},
		Jobs:            jobs,
		Burst:           burstPlanner(p, jobs),
		Inventory:       inventory,
		Bookings:        lazyBookings{reads},
		Settings:        settings,
		Usage:           usage,
		IngestedThrough: ingestedThrough(p),
		QOSPrefix:       c.Tenants.QOSPrefix, OnDemandPartition: c.Tenants.OnDemandPartition, OnDemandQOS: c.Tenants.OnDemandQOS,
	}}
	p.Metrics.SetLive(live)
	srv := api.New(api.Options{
		Tokens:          lazyTokens{p.DB},
		TokenNotFound:   tokenstore.ErrNotFound,
		Live:            live,
		Usage:           usage,
		Bookings:        lazyBookings{writes},
		BookingReads:    lazyBookings{reads},
		ReservationName: settings.ReservationName,
		Metrics:         p.Metrics,
		Logger:          p.Logger,
		AuthFailures:    float64(c.API.AuthFailuresPerMinute),
		AuthBurst:       c.API.AuthFailureBurst,
		TokenRate:       float64(c.API.TokenRequestsPerSecond),
		TokenBurst:      c.API.TokenRequestBurst,
		AddressRate:     float64(c.API.AddressRequestsPerSecond),
		AddressBurst:    c.API.AddressRequestBurst,
		UsageTTL:        every,
		SecureCookies:   c.Server.TLSCertFile != "",
	})
	return srv, live.Run
}

// slurmReads are the snapshot's reads of slurmrestd, each cached for one
// refresh interval: the jobs (one bulk read per cycle) and the pool's
// inventory.
func slurmReads(p APIParams) (*api.JobCache, *api.InventoryCache) {
	every := p.Config.API.RefreshInterval.Duration
	jobs := &api.JobCache{TTL: every, Jobs: &slurmjobs.Jobs{Client: setSlurm{p.Slurm}, Logger: p.Logger}}
	inventory := &api.InventoryCache{TTL: every, Source: poolInventory{slurm: p.Slurm, pool: p.Config.Tenants.PoolPartition}}
	return jobs, inventory
}

// setSlurm is slurmjobs.Client over the Set's slurmrestd client (made
// once, negotiated by its first request): each call fails while
// slurmrestd cannot be used, and the next tries again.
type setSlurm struct {
	get func(ctx context.Context) (*slurmrest.Client, error)
}

func (s setSlurm) ListJobsSince(ctx context.Context, f slurmrest.JobFilter, since time.Time) (slurmrest.JobsPage, error) {
	cl, err := s.get(ctx)
	if err != nil {
		return slurmrest.JobsPage{}, err
	}
	return cl.ListJobsSince(ctx, f, since)
}

func (s setSlurm) UpdateJob(ctx context.Context, id int64, u slurmrest.JobUpdate) error {
	cl, err := s.get(ctx)
	if err != nil {
		return err
	}
	return cl.UpdateJob(ctx, id, u)
}

// poolInventory reads the pool's inventory through the booking adapter
// over the Set's slurmrestd client (made once, negotiated by its first
// request): a plain adapter, built at each read for nothing.
type poolInventory struct {
	slurm func(ctx context.Context) (*slurmrest.Client, error)
	pool  string
}

func (s poolInventory) Inventory(ctx context.Context) (reserve.Inventory, error) {
	cl, err := s.slurm(ctx)
	if err != nil {
		return reserve.Inventory{}, err
	}
	return slurmadapter.New(cl, s.pool).Inventory(ctx)
}

// bookingServices are the booking use cases (p.Cases) on the service for
// changes (admitted against
// a fresh read of the cluster) and the one for reads (sharing the cycle's
// inventory).
func bookingServices(p APIParams, inventory *api.InventoryCache) (writes, reads *clients.Lazy[api.Bookings]) {
	cases := p.Cases
	if cases == nil {
		cases = func(s *reserve.Service) api.Bookings { return s }
	}
	writes = clients.NewLazy(func(ctx context.Context) (api.Bookings, error) {
		svc, err := p.Bookings(ctx)
		if err != nil {
			return nil, err
		}
		return cases(svc), nil
	})
	reads = clients.NewLazy(func(ctx context.Context) (api.Bookings, error) {
		svc, err := p.Bookings(ctx)
		if err != nil {
			return nil, err
		}
		r := *svc
		r.Source = inventory
		return cases(&r), nil
	})
	return writes, reads
}

// burstPlanner is the burst service of the snapshot, reading the cycle's
// one bulk jobs read.
func burstPlanner(p APIParams, jobs *api.JobCache) lazyPlanner {
	return lazyPlanner{clients.NewLazy(func(ctx context.Context) (*BurstService, error) {
		svc, err := p.Burst(ctx)
		if err != nil {
			return nil, err
		}
		svc.Jobs = jobs // the cycle's one bulk read
		return svc, nil
	})}
}

// ingestedThrough reads the ledger's watermark of the cluster: the end
// time through which usage is ingested (zero before any ingest).
func ingestedThrough(p APIParams) func(ctx context.Context) (time.Time, error) {
	return func(ctx context.Context) (time.Time, error) {
		db, err := p.DB(ctx)
		if err != nil {
			return time.Time{}, err
		}
		cluster, err := p.Cluster(ctx)
		if err != nil {
			return time.Time{}, err
		}
		s, err := ledger.NewDB(db, p.Logger).State(ctx, cluster)
		if err != nil || s.IngestedThrough() == 0 {
			return time.Time{}, err
		}
		return time.Unix(s.IngestedThrough(), 0).UTC(), nil
	}
}
