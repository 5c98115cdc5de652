package app

import (
	"context"
	"errors"
	"net/http"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/wire"
)

// API is the wiring of the tenant API (cmd/gpubridge/wire.API) for `serve`, on
// the daemon's reloadable clients. It is made once per
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
// configuration c, built on the generation's clients once its cluster's
// name is resolved. Nothing connects here.
func (w *API) App(ctx context.Context, c config.Config, set *clients.Set) (http.Handler, func(context.Context), error) {
	e := w.Env.WithClients(c, set)
	p := wire.APIParams{Config: c, Logger: e.Logger().With("component", "api"), Metrics: w.Metrics,
		// The API runs the use cases the CLI runs.
		Cases: func(s *reserve.Service) api.Bookings { return BookingCases{Service: s} },
	}
	k, err := e.on(ctx, true)
	if err != nil {
		return nil, nil, err
	}
	p.Slurm, p.DB, p.Cluster = k.Slurm, k.DB, k.Cluster
	bk, err := e.Bookings(ctx)
	if err != nil {
		return nil, nil, err
	}
	p.Bookings = bk.Service
	if p.Burst, err = e.Burst(ctx, "", ""); err != nil {
		return nil, nil, err
	}
	books, err := e.Books(ctx)
	if err != nil {
		return nil, nil, err
	}
	p.Usage = UsageCases{Books: books}
	p.Tokens = apiTokens{e}
	p.MemberCases = apiMembers{e}
	p.Exports = apiExports{e}
	// The node health routes and page: on a site without a health service
	// (no health.nodes) they answer "not available".
	if hs, err := e.Health(ctx); err == nil {
		p.Health = apiHealth{hs}
	} else {
		p.Logger.Info("the API has no node health routes", "why", err)
	}
	srv, loop := wire.API(p)
	return srv, loop, nil
}

// apiTokens are the token use cases the CLI runs (AddToken, ListTokens,
// DeleteToken) as the API's TokenCases: an input error is the client's
// (400), deleting a token that does not exist is 404.
type apiTokens struct{ e *Env }

func (a apiTokens) Add(ctx context.Context, actor string, t token.Token) (token.Issued, error) {
	is, err := a.e.AddToken(ctx, actor, t)
	if errors.Is(err, ErrInput) {
		return is, api.InputError(err)
	}
	return is, err
}

func (a apiTokens) List(ctx context.Context, tenant string) ([]token.Token, error) {
	l, err := a.e.ListTokens(ctx, tenant)
	return l.Tokens, err
}

func (a apiTokens) Delete(ctx context.Context, actor, tenant, name string) (token.Token, error) {
	t, err := a.e.DeleteToken(ctx, actor, token.Token{Tenant: tenant, Name: name}, nil)
	if errors.Is(err, ErrInput) {
		return t, api.ErrNotFound
	}
	return t, err
}
