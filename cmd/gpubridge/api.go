package main

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/bridge/api"
	"github.com/gpubridge/gpubridge/bridge/api/token"
	"github.com/gpubridge/gpubridge/bridge/api/tokenstore"
	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/burst/service"
	"github.com/gpubridge/gpubridge/bridge/burst/slurmjobs"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/slurmadapter"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/internal/clients"
	"github.com/gpubridge/gpubridge/internal/config"
)

// The wiring of the tenant API (bridge/api) for `serve`: its ports on the
// stores and use cases the CLI uses (tenant store, burst service, booking
// service, billing books, token store), each built at its first use on the
// daemon's lazily connected, reloadable clients.

// apiWiring is made once per `serve`; App is called for each configuration.
type apiWiring struct {
	a       *App
	metrics *api.Metrics // registered once per process
}

func newAPIWiring(a *App) *apiWiring {
	return &apiWiring{a: a, metrics: api.NewMetrics(a.Registry())}
}

// App is daemon.Options.App: the API's handler and its snapshot loop for
// configuration c. Nothing connects here.
func (w *apiWiring) App(c config.Config, set *clients.Set) (http.Handler, func(context.Context), error) {
	a := w.a.withClients(c, set)
	log := a.Logger().With("component", "api")
	every := c.API.RefreshInterval.Duration
	settings := bookingSettings(c)

	jobs := &api.JobCache{TTL: every, Jobs: lazyJobs{&lazy[*slurmjobs.Jobs]{build: func(ctx context.Context) (*slurmjobs.Jobs, error) {
		cl, err := a.Slurm(ctx)
		if err != nil {
			return nil, err
		}
		return &slurmjobs.Jobs{Client: cl, Logger: log}, nil
	}}}}
	inventory := &api.InventoryCache{TTL: every, Source: lazySource{&lazy[*slurmadapter.Adapter]{build: func(ctx context.Context) (*slurmadapter.Adapter, error) {
		cl, err := a.Slurm(ctx)
		if err != nil {
			return nil, err
		}
		return slurmadapter.New(cl, c.Tenants.PoolPartition), nil
	}}}}
	// Changes admit against a fresh read of the cluster; reads share the
	// cycle's.
	writes := &lazy[*reserve.Service]{build: func(ctx context.Context) (*reserve.Service, error) {
		svc, _, _, err := a.bookings(ctx)
		return svc, err
	}}
	reads := &lazy[*reserve.Service]{build: func(ctx context.Context) (*reserve.Service, error) {
		svc, _, _, err := a.bookings(ctx)
		if err != nil {
			return nil, err
		}
		r := *svc
		r.Source = inventory
		return &r, nil
	}}
	usage := lazyUsage{&lazy[api.UsageReader]{build: func(ctx context.Context) (api.UsageReader, error) { return a.books(ctx) }}}
	live := &api.Live{Interval: every, Logger: log, Sources: api.Sources{
		Tenants: lazyTenants{a},
		Jobs:    jobs,
		Burst: lazyPlanner{&lazy[*service.Service]{build: func(ctx context.Context) (*service.Service, error) {
			svc, err := a.burstController(ctx, c, "", "")
			if err != nil {
				return nil, err
			}
			svc.Jobs = jobs // the cycle's one bulk read
			return svc, nil
		}}},
		Inventory: inventory,
		Bookings:  lazyBookings{reads},
		Settings:  settings,
		Usage:     usage,
		IngestedThrough: func(ctx context.Context) (time.Time, error) {
			st, err := a.ledgerStore(ctx)
			if err != nil {
				return time.Time{}, err
			}
			s, err := st.State(ctx, c.Cluster)
			if err != nil || s.IngestedThrough() == 0 {
				return time.Time{}, err
			}
			return time.Unix(s.IngestedThrough(), 0).UTC(), nil
		},
		QOSPrefix: c.Tenants.QOSPrefix, OnDemandPartition: c.Tenants.OnDemandPartition, OnDemandQOS: c.Tenants.OnDemandQOS,
	}}
	w.metrics.SetLive(live)
	srv := api.New(api.Options{
		Tokens:          lazyTokens{a},
		TokenNotFound:   tokenstore.ErrNotFound,
		Live:            live,
		Usage:           usage,
		Bookings:        lazyBookings{writes},
		BookingReads:    lazyBookings{reads},
		ReservationName: settings.ReservationName,
		Metrics:         w.metrics,
		Logger:          log,
		AuthFailures:    float64(c.API.AuthFailuresPerMinute),
		AuthBurst:       c.API.AuthFailureBurst,
		UsageTTL:        every,
		SecureCookies:   c.Server.TLSCertFile != "",
	})
	return srv, live.Run, nil
}

// lazy builds a value at its first successful use.
type lazy[T any] struct {
	mu    sync.Mutex
	v     T
	built bool
	build func(ctx context.Context) (T, error)
}

func (l *lazy[T]) get(ctx context.Context) (T, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.built {
		return l.v, nil
	}
	v, err := l.build(ctx)
	if err != nil {
		return v, err
	}
	l.v, l.built = v, true
	return v, nil
}

type lazyJobs struct{ l *lazy[*slurmjobs.Jobs] }

func (j lazyJobs) ListJobs(ctx context.Context) ([]burst.Job, error) {
	v, err := j.l.get(ctx)
	if err != nil {
		return nil, err
	}
	return v.ListJobs(ctx)
}

type lazySource struct{ l *lazy[*slurmadapter.Adapter] }

func (s lazySource) Inventory(ctx context.Context) (reserve.Inventory, error) {
	v, err := s.l.get(ctx)
	if err != nil {
		return reserve.Inventory{}, err
	}
	return v.Inventory(ctx)
}

type lazyUsage struct{ l *lazy[api.UsageReader] }

func (u lazyUsage) Summary(ctx context.Context, p meter.Period, account string) (export.Summary, error) {
	r, err := u.l.get(ctx)
	if err != nil {
		return export.Summary{}, err
	}
	return r.Summary(ctx, p, account)
}

type lazyPlanner struct{ l *lazy[*service.Service] }

func (p lazyPlanner) Plan(ctx context.Context) (burst.Plan, error) {
	s, err := p.l.get(ctx)
	if err != nil {
		return burst.Plan{}, err
	}
	return s.Plan(ctx)
}

func (p lazyPlanner) StoredRefusals(ctx context.Context) ([]burst.StoredRefusal, error) {
	s, err := p.l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.Stored.Refusals(ctx, "")
}

// lazyTenants reads the tenant store on the daemon's database pool.
type lazyTenants struct{ a *App }

func (t lazyTenants) List(ctx context.Context) ([]tenant.Tenant, error) {
	db, err := t.a.DB(ctx)
	if err != nil {
		return nil, err
	}
	return tenantstore.New(db).List(ctx)
}

// lazyTokens is the token store on the daemon's database pool.
type lazyTokens struct{ a *App }

func (t lazyTokens) Lookup(ctx context.Context, h token.Hash) (token.Token, error) {
	db, err := t.a.DB(ctx)
	if err != nil {
		return token.Token{}, err
	}
	return tokenstore.New(db).Lookup(ctx, h)
}

func (t lazyTokens) Touch(ctx context.Context, id int64, at time.Time) error {
	db, err := t.a.DB(ctx)
	if err != nil {
		return err
	}
	return tokenstore.New(db).Touch(ctx, id, at)
}

// lazyBookings is api.Bookings over a booking service built at first use.
type lazyBookings struct{ l *lazy[*reserve.Service] }

var _ api.Bookings = lazyBookings{}

func (b lazyBookings) List(ctx context.Context, f reserve.ListFilter) ([]reserve.Booking, error) {
	s, err := b.l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.List(ctx, f)
}

func (b lazyBookings) Availability(ctx context.Context, q reserve.AvailabilityQuery) (reserve.Availability, error) {
	s, err := b.l.get(ctx)
	if err != nil {
		return reserve.Availability{}, err
	}
	return s.Availability(ctx, q)
}

func (b lazyBookings) Get(ctx context.Context, id int64) (reserve.Booking, error) {
	s, err := b.l.get(ctx)
	if err != nil {
		return reserve.Booking{}, err
	}
	return s.Get(ctx, id)
}

func (b lazyBookings) Add(ctx context.Context, actor string, r reserve.Request) (reserve.Booking, error) {
	s, err := b.l.get(ctx)
	if err != nil {
		return reserve.Booking{}, err
	}
	return s.Add(ctx, actor, r)
}

func (b lazyBookings) Modify(ctx context.Context, actor string, id int64, c reserve.Change) (reserve.Booking, reserve.Booking, error) {
	s, err := b.l.get(ctx)
	if err != nil {
		return reserve.Booking{}, reserve.Booking{}, err
	}
	return s.Modify(ctx, actor, id, c)
}

func (b lazyBookings) Cancel(ctx context.Context, actor string, id int64) (reserve.Booking, error) {
	s, err := b.l.get(ctx)
	if err != nil {
		return reserve.Booking{}, err
	}
	return s.Cancel(ctx, actor, id)
}

func (b lazyBookings) FindSlots(ctx context.Context, q reserve.SlotQuery) ([]reserve.Slot, error) {
	s, err := b.l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.FindSlots(ctx, q)
}
