package app

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/internal/money"
)

// The booking charges (accounting/billing.BookingCharger) on the booking
// store, and the bookings' prices for spend limits.

// BookingCharger charges the booking store's bookings into the ledger
// (`gpubridge charge bookings`, close, the daemon's booking-charges job).
func (e *Env) BookingCharger(ctx context.Context) (*billing.BookingCharger, error) {
	k, err := e.on(ctx, false)
	if err != nil {
		return nil, err
	}
	c, cluster, st := k.Config, k.Cluster, ledger.NewDB(k.DB, e.Logger())
	bk, err := e.BookingStore(ctx)
	if err != nil {
		return nil, err
	}
	bs := bk.Store
	return &billing.BookingCharger{
		Cluster: cluster, Ledger: st, Policy: meter.Cancellation{FreeBefore: c.Bookings.Cancellation.FreeBefore.Duration},
		Bookings: func(ctx context.Context) ([]meter.BookedWindow, []string, error) {
			all, err := bs.List(ctx, reserve.Filter{})
			if err != nil {
				return nil, nil, err
			}
			ws, un := reserve.BookedWindows(all)
			return ws, un, nil
		},
	}, nil
}

// ChargeBookings charges every booking once (gpubridge charge bookings,
// as the daemon's booking-charges job does). Its result, nil when no run
// started, says what the run wrote, also when it stopped with an error
// (bookings it could not charge: billing.ErrUncharged).
func (e *Env) ChargeBookings(ctx context.Context) (*billing.ChargeResult, error) {
	ch, err := e.BookingCharger(ctx)
	if err != nil {
		return nil, err
	}
	res, err := ch.Charge(ctx)
	return &res, err
}

// CardCoster prices bookings with the rate card's booked tier (a tenant's
// monthly spend limit counts them): reserve.Coster.
type CardCoster struct{ Card pricing.Card }

var _ reserve.Coster = CardCoster{}

func (c CardCoster) BookedCost(typ string, gpuSeconds int64, at time.Time) (money.Amount, error) {
	q, err := c.Card.Quote(typ, meter.Booked, at.Unix())
	if err != nil {
		return money.Amount{}, err
	}
	return c.Card.Amount(q, gpuSeconds)
}

// bookingPricing prices each admission under a spend limit with the rate
// card in force then (reserve.Service.Pricing): its CardCoster, or nil
// without a card (the spend limit then refuses: the cost is unknown).
func bookingPricing(db *sqlx.DB) func(ctx context.Context) (reserve.Coster, error) {
	cards := ratecard.NewDB(db)
	return func(ctx context.Context) (reserve.Coster, error) {
		card, ok, err := cards.Current(ctx)
		if err != nil || !ok {
			return nil, err
		}
		return CardCoster{card}, nil
	}
}
