package app

import (
	"context"
	"net/http"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/wire"
)

// API is the wiring of the tenant API (cmd/gpubridge/wire.API) for `serve`, on
// the daemon's lazily connected, reloadable clients. It is made once per
// `serve` (NewAPI); App is called for each configuration.
type API struct {
	Env     *Env
	Metrics *api.Metrics // registered once per process
}

// NewAPI makes the tenant API's wiring on e, registering its metrics on
// e's registry.
func NewAPI(e *Env) *API {
	return &API{Env: e, Metrics: api.NewMetrics(e.Registry())}
}

// App is daemon.Options.App: the API's handler and its snapshot loop for
// configuration c. Nothing connects here.
func (w *API) App(c config.Config, set *clients.Set) (http.Handler, func(context.Context), error) {
	e := w.Env.WithClients(c, set)
	srv, loop := wire.API(wire.APIParams{
		Config: c, Logger: e.Logger().With("component", "api"), Metrics: w.Metrics,
		Slurm: e.Slurm, DB: e.DB, Cluster: e.ClusterName,
		Bookings: func(ctx context.Context) (*reserve.Service, error) {
			bk, err := e.Bookings(ctx)
			return bk.Service, err
		},
		// The API runs the use cases the CLI runs.
		Cases: func(s *reserve.Service) api.Bookings { return BookingCases{Service: s} },
		Burst: func(ctx context.Context) (*wire.BurstService, error) { return e.Burst(ctx, "", "") },
		Usage: func(ctx context.Context) (api.UsageReader, error) {
			books, err := e.Books(ctx)
			return UsageCases{Books: books}, err
		},
	})
	return srv, loop, nil
}
