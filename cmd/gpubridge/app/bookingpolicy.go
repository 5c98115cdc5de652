package app

import (
	"context"

	"github.com/gpubridge/gpubridge/bridge/reserve/view"
	"github.com/gpubridge/gpubridge/internal/table"
)

// BookingPolicy is the booking policy that binds a tenant (show
// booking-policy): its own keys over the configured default, maxGPUs its
// quota where neither sets it.
type BookingPolicy struct {
	Rows []view.PolicyRow
}

// Table is show booking-policy's table (its --json: the rows).
func (r BookingPolicy) Table() table.Table { return view.Policy(r.Rows) }

// BookingPolicy returns the policy that binds tenant.
func (e *Env) BookingPolicy(ctx context.Context, tenant string) (BookingPolicy, error) {
	bk, err := e.BookingStore(ctx)
	if err != nil {
		return BookingPolicy{}, err
	}
	p, err := BookingCases{Service: bk.Service}.Policy(ctx, tenant)
	if err != nil {
		return BookingPolicy{}, err
	}
	return BookingPolicy{Rows: view.PolicyRows(p)}, nil
}
