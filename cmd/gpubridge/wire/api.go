package wire

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/burst/slurmjobs"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/slurmadapter"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/sessionstore"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/tokenstore"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

// APIParams are what the API of one configuration is built on: the
// cluster's connections and the use cases, built eagerly (none of them
// connects before its first request).
type APIParams struct {
	Config  config.Config
	Logger  *slog.Logger
	Metrics *api.Metrics // registered once per process

	Slurm *slurmrest.Client
	DB    *sqlx.DB
	// Cluster is the cluster's name (cmd/gpubridge/clients.Cluster.Name):
	// the ledger's watermark is read under it.
	Cluster string
	// Bookings is the booking service with its Source (a fresh read of the
	// cluster): changes admit against it, reads share the cycle's.
	Bookings *reserve.Service
	// Cases are the booking use cases on a service (app.BookingCases):
	// what the API's booking routes and snapshot call (nil: the service
	// itself).
	Cases func(*reserve.Service) api.Bookings
	// Burst is the burst service on the stored tenants and rate card,
	// the API's own: API sets its Jobs to the snapshot's cached read.
	Burst *BurstService
	// Usage is the period view of the billing books.
	Usage api.UsageReader
	// Tokens are the token use cases (a tenant admin's tokens).
	Tokens api.TokenCases
	// MemberCases are the members use cases (a tenant admin's members).
	MemberCases api.MemberCases
	// Health are the node health use cases and Exports the chargeback
	// export (nil: their routes answer 503).
	Health  api.HealthCases
	Exports api.Exports
}

// API returns the tenant API's handler (cmd/gpubridge/api) and its
// snapshot loop for `serve`: its ports on the stores and use cases the CLI
// uses (the tenant store, the burst service, the booking service, the
// billing books, the token store, the ledger's ingest watermark). Nothing
// connects here.
func API(p APIParams) (http.Handler, func(context.Context)) {
	c := p.Config
	every := c.API.RefreshInterval.Duration
	settings := BookingSettings(c)
	jobs := &api.JobCache{TTL: every, Jobs: &slurmjobs.Jobs{Client: p.Slurm, Logger: p.Logger}}
	inventory := &api.InventoryCache{TTL: every, Source: slurmadapter.New(p.Slurm, c.Tenants.PoolPartition)}
	writes, reads := bookingServices(p, inventory)
	p.Burst.Jobs = jobs // the API's own burst service reads the snapshot's one bulk read per cycle
	live := &api.Live{Interval: every, Logger: p.Logger, Sources: api.Sources{
		Tenants:         tenantstore.New(p.DB),
		Jobs:            jobs,
		Burst:           burstPlanner{p.Burst},
		Inventory:       inventory,
		Bookings:        reads,
		Settings:        settings,
		Usage:           p.Usage,
		IngestedThrough: ingestedThrough(p),
		QOSPrefix:       c.Tenants.QOSPrefix, OnDemandPartition: c.Tenants.OnDemandPartition, OnDemandQOS: c.Tenants.OnDemandQOS,
	}}
	p.Metrics.SetLive(live)
	tenants := live.Sources.Tenants
	srv := api.New(api.Options{
		Tokens:          tokenstore.New(p.DB),
		TokenNotFound:   tokenstore.ErrNotFound,
		Live:            live,
		Usage:           p.Usage,
		Bookings:        writes,
		BookingReads:    reads,
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
		// The portal: people sign in with Slurm JWTs, their tenants read
		// from the tenant list; bookings priced with the rate card in
		// force and cancelled under the configured notice.
		JWTKey:           jwtKey(c.PortalJWTKeyFile()),
		JWKS:             jwksFile(c.Portal.JWKSFile),
		OIDC:             portalOIDC(c.Portal.OIDC),
		Sessions:         sessions{sessionstore.New(p.DB)},
		TokenCases:       p.Tokens,
		MemberCases:      p.MemberCases,
		Health:           p.Health,
		Exports:          p.Exports,
		Members:          tenants,
		Pricing:          bookedPricing(p.Bookings),
		CancelFreeBefore: c.Bookings.Cancellation.FreeBefore.Duration,
	})
	return srv, live.Run
}

// jwtKey reads the portal's JWT key file at its first use (nil without
// one: person sign-in is off).
func jwtKey(file string) api.JWTKey {
	if file == "" {
		return nil
	}
	return func() ([]byte, error) { return os.ReadFile(file) }
}

// jwksFile reads the portal's JWKS file at its first use (nil without
// one: RS256 JWTs are refused).
func jwksFile(file string) api.JWKSFile {
	if file == "" {
		return nil
	}
	return func() ([]byte, error) { return os.ReadFile(file) }
}

// portalOIDC is the portal's OIDC provider (nil without one); the
// client secret is read at the first sign-in.
func portalOIDC(o *config.PortalOIDC) *api.OIDC {
	if o == nil {
		return nil
	}
	out := &api.OIDC{Issuer: o.Issuer, ClientID: o.ClientID, RedirectURL: o.RedirectURL, UserClaim: o.UserClaim, Scopes: o.Scopes}
	if f := o.ClientSecretFile; f != "" {
		out.ClientSecret = func() (string, error) {
			b, err := os.ReadFile(f)
			return string(b), err
		}
	}
	return out
}

// sessions is the portal's SessionStore on the database.
type sessions struct{ s *sessionstore.DB }

func (x sessions) Create(ctx context.Context, ss api.Session) error {
	return x.s.Create(ctx, sessionstore.Session(ss))
}

func (x sessions) Get(ctx context.Context, id string) (api.Session, error) {
	ss, err := x.s.Get(ctx, id)
	if errors.Is(err, sessionstore.ErrNotFound) {
		return api.Session{}, api.ErrNoSession
	}
	return api.Session(ss), err
}

func (x sessions) Delete(ctx context.Context, id string) error { return x.s.Delete(ctx, id) }

// bookedPricing is the booking service's pricing: the rate card in force
// (Pricing), else its fixed Coster.
func bookedPricing(s *reserve.Service) func(ctx context.Context) (reserve.Coster, error) {
	return func(ctx context.Context) (reserve.Coster, error) {
		if s.Pricing != nil {
			return s.Pricing(ctx)
		}
		return s.Coster, nil
	}
}

// bookingServices are the booking use cases (p.Cases) on the service for
// changes (admitted against a fresh read of the cluster) and on a copy
// for reads (sharing the cycle's inventory).
func bookingServices(p APIParams, inventory *api.InventoryCache) (writes, reads api.Bookings) {
	cases := p.Cases
	if cases == nil {
		cases = func(s *reserve.Service) api.Bookings { return s }
	}
	r := *p.Bookings
	r.Source = inventory
	return cases(p.Bookings), cases(&r)
}

// burstPlanner is the snapshot's burst planner: the burst service, with
// the refusals its last cycle stored.
type burstPlanner struct{ s *BurstService }

func (b burstPlanner) Plan(ctx context.Context) (burst.Plan, error) { return b.s.Plan(ctx) }

func (b burstPlanner) StoredRefusals(ctx context.Context) ([]burst.StoredRefusal, error) {
	return b.s.Stored.Refusals(ctx, "")
}

// ingestedThrough reads the ledger's watermark of the cluster: the end
// time through which usage is ingested (zero before any ingest).
func ingestedThrough(p APIParams) func(ctx context.Context) (time.Time, error) {
	l := ledger.NewDB(p.DB, p.Logger)
	return func(ctx context.Context) (time.Time, error) {
		s, err := l.State(ctx, p.Cluster)
		if err != nil || s.IngestedThrough() == 0 {
			return time.Time{}, err
		}
		return time.Unix(s.IngestedThrough(), 0).UTC(), nil
	}
}
