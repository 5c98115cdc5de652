package wire

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/tokenstore"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
)

// The API's ports over values built at their first use.

type lazyUsage struct {
	l *clients.Lazy[api.UsageReader]
}

func (u lazyUsage) Summary(ctx context.Context, p meter.Period, account string) (export.Summary, error) {
	r, err := u.l.Get(ctx)
	if err != nil {
		return export.Summary{}, err
	}
	return r.Summary(ctx, p, account)
}

type lazyPlanner struct {
	l *clients.Lazy[*BurstService]
}

func (p lazyPlanner) Plan(ctx context.Context) (burst.Plan, error) {
	s, err := p.l.Get(ctx)
	if err != nil {
		return burst.Plan{}, err
	}
	return s.Plan(ctx)
}

func (p lazyPlanner) StoredRefusals(ctx context.Context) ([]burst.StoredRefusal, error) {
	s, err := p.l.Get(ctx)
	if err != nil {
		return nil, err
	}
	return s.Stored.Refusals(ctx, "")
}

// lazyTenants reads the tenant store on the daemon's database pool.
type lazyTenants struct {
	db func(ctx context.Context) (*sqlx.DB, error)
}

func (t lazyTenants) List(ctx context.Context) ([]tenant.Tenant, error) {
	db, err := t.db(ctx)
	if err != nil {
		return nil, err
	}
	return tenantstore.New(db).List(ctx)
}

// lazyTokens is the token store on the daemon's database pool.
type lazyTokens struct {
	db func(ctx context.Context) (*sqlx.DB, error)
}

var _ api.TokenStore = lazyTokens{}

func (t lazyTokens) Lookup(ctx context.Context, h token.Hash) (token.Token, error) {
	db, err := t.db(ctx)
	if err != nil {
		return token.Token{}, err
	}
	return tokenstore.New(db).Lookup(ctx, h)
}

func (t lazyTokens) Touch(ctx context.Context, id int64, at time.Time) error {
	db, err := t.db(ctx)
	if err != nil {
		return err
	}
	return tokenstore.New(db).Touch(ctx, id, at)
}

// lazyBookings is api.Bookings over the booking use cases built at first
// use.
type lazyBookings struct {
	l *clients.Lazy[api.Bookings]
}

var _ api.Bookings = lazyBookings{}

func (b lazyBookings) List(ctx context.Context, f reserve.ListFilter) ([]reserve.Booking, error) {
	s, err := b.l.Get(ctx)
	if err != nil {
		return nil, err
	}
	return s.List(ctx, f)
}

func (b lazyBookings) Availability(ctx context.Context, q reserve.AvailabilityQuery) (reserve.Availability, error) {
	s, err := b.l.Get(ctx)
	if err != nil {
		return reserve.Availability{}, err
	}
	return s.Availability(ctx, q)
}

func (b lazyBookings) Get(ctx context.Context, id int64) (reserve.Booking, error) {
	s, err := b.l.Get(ctx)
	if err != nil {
		return reserve.Booking{}, err
	}
	return s.Get(ctx, id)
}

func (b lazyBookings) Add(ctx context.Context, actor string, r reserve.Request) (reserve.Booking, error) {
	s, err := b.l.Get(ctx)
	if err != nil {
		return reserve.Booking{}, err
	}
	return s.Add(ctx, actor, r)
}

func (b lazyBookings) Modify(ctx context.Context, actor string, id int64, c reserve.Change) (reserve.Booking, reserve.Booking, error) {
	s, err := b.l.Get(ctx)
	if err != nil {
		return reserve.Booking{}, reserve.Booking{}, err
	}
	return s.Modify(ctx, actor, id, c)
}

func (b lazyBookings) Cancel(ctx context.Context, actor string, id int64) (reserve.Booking, error) {
	s, err := b.l.Get(ctx)
	if err != nil {
		return reserve.Booking{}, err
	}
	return s.Cancel(ctx, actor, id)
}

func (b lazyBookings) Policy(ctx context.Context, tenant string) (reserve.Policy, error) {
	s, err := b.l.Get(ctx)
	if err != nil {
		return reserve.Policy{}, err
	}
	return s.Policy(ctx, tenant)
}

func (b lazyBookings) FindSlots(ctx context.Context, q reserve.SlotQuery) ([]reserve.Slot, error) {
	s, err := b.l.Get(ctx)
	if err != nil {
		return nil, err
	}
	return s.FindSlots(ctx, q)
}
