package app

import (
	"context"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/view"
)

// BookingPolicy is the booking policy that binds a tenant (show booking
// policy): its own keys over the configured default, maxGPUs its quota
// where neither sets it.
type BookingPolicy struct {
	Tenant string         `json:"tenant"`
	Policy reserve.Policy `json:"policy"`
}

// Text is show booking policy's text.
func (r BookingPolicy) Text() string { return view.Policy(r.Tenant, r.Policy) }

// BookingPolicy returns the policy that binds tenant (where["tenant"]).
func (e *Env) BookingPolicy(ctx context.Context, where map[string]string) (BookingPolicy, error) {
	bk, err := e.BookingStore(ctx)
	if err != nil {
		return BookingPolicy{}, err
	}
	p, err := bk.Service.Policy(ctx, where["tenant"])
	if err != nil {
		return BookingPolicy{}, bookingErr(err)
	}
	return BookingPolicy{Tenant: where["tenant"], Policy: p}, nil
}
