package main

import (
	"context"
	"net/http"

	"github.com/gpubridge/gpubridge/bridge/api"
	apisetup "github.com/gpubridge/gpubridge/bridge/api/setup"
	"github.com/gpubridge/gpubridge/bridge/burst/service"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/internal/clients"
	"github.com/gpubridge/gpubridge/internal/config"
)

// The wiring of the tenant API (bridge/api/setup) for `serve`, on the
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
	srv, loop := apisetup.New(apisetup.Params{
		Config: c, Logger: a.Logger().With("component", "api"), Metrics: w.metrics,
		Slurm: a.Slurm, DB: a.DB,
		Bookings: func(ctx context.Context) (*reserve.Service, error) {
			bk, err := a.bookings(ctx)
			return bk.Service, err
		},
		Burst: func(ctx context.Context) (*service.Service, error) { return a.Burst(ctx, "", "") },
		Usage: func(ctx context.Context) (api.UsageReader, error) { return a.Books(ctx) },
	})
	return srv, loop, nil
}
