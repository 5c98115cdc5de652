package app

import (
	"context"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api"
)

// BookingCases are the booking use cases on one booking service: the
// CLI's booking commands (Env.AddBooking, Env.ModifyBooking, ...) run
// them after their own parsing and confirmation, and the tenant API's
// booking routes and snapshot run them through their port (api.Bookings,
// wired in api.go). Input problems come back as ErrInput (which the API
// sees through: errors.As still finds the reserve.Problems), refusals
// as they are.
type BookingCases struct {
	Service *reserve.Service
}

var _ api.Bookings = BookingCases{}

// Add admits booking r for actor.
func (c BookingCases) Add(ctx context.Context, actor string, r reserve.Request) (reserve.Booking, error) {
	b, err := c.Service.Add(ctx, actor, r)
	return b, bookingErr(err)
}

// Check is Add without storing: the booking as it would be admitted.
func (c BookingCases) Check(ctx context.Context, actor string, r reserve.Request) (reserve.Booking, error) {
	b, err := c.Service.Check(ctx, actor, r)
	return b, bookingErr(err)
}

// Get is booking id.
func (c BookingCases) Get(ctx context.Context, id int64) (reserve.Booking, error) {
	b, err := c.Service.Get(ctx, id)
	return b, bookingErr(err)
}

// Modify changes booking id by ch for actor; it returns the booking
// before and after.
func (c BookingCases) Modify(ctx context.Context, actor string, id int64, ch reserve.Change) (before, after reserve.Booking, err error) {
	before, after, err = c.Service.Modify(ctx, actor, id, ch)
	return before, after, bookingErr(err)
}

// Cancel cancels booking id for actor.
func (c BookingCases) Cancel(ctx context.Context, actor string, id int64) (reserve.Booking, error) {
	b, err := c.Service.Cancel(ctx, actor, id)
	return b, bookingErr(err)
}

// List lists the bookings f keeps.
func (c BookingCases) List(ctx context.Context, f reserve.ListFilter) ([]reserve.Booking, error) {
	return c.Service.List(ctx, f)
}

// Availability is the free and booked capacity q asks for.
func (c BookingCases) Availability(ctx context.Context, q reserve.AvailabilityQuery) (reserve.Availability, error) {
	av, err := c.Service.Availability(ctx, q)
	return av, bookingErr(err)
}

// FindSlots finds the earliest windows of the shape q asks for.
func (c BookingCases) FindSlots(ctx context.Context, q reserve.SlotQuery) ([]reserve.Slot, error) {
	slots, err := c.Service.FindSlots(ctx, q)
	return slots, bookingErr(err)
}

// Policy is the booking policy that binds tenant.
func (c BookingCases) Policy(ctx context.Context, tenant string) (reserve.Policy, error) {
	p, err := c.Service.Policy(ctx, tenant)
	return p, bookingErr(err)
}

// UsageCases are the usage use cases on the billing books: show usage
// (Env.Usage) and the tenant API's usage route and snapshot (its port
// api.UsageReader, wired in api.go) price periods through them.
type UsageCases struct {
	Books billing.Books
}

var _ api.UsageReader = UsageCases{}

// Summary is period p priced, of account's rows when it names one (every
// account's otherwise).
func (c UsageCases) Summary(ctx context.Context, p meter.Period, account string) (export.Summary, error) {
	return c.Books.Summary(ctx, p, account)
}

// Summaries are the summaries of each period r names, of r.Account's rows
// when it names one.
func (c UsageCases) Summaries(ctx context.Context, r UsageRequest) ([]export.Summary, error) {
	var sums []export.Summary
	for _, p := range r.Periods {
		s, err := c.Summary(ctx, p, r.Account)
		if err != nil {
			return nil, err
		}
		sums = append(sums, s)
	}
	return sums, nil
}
