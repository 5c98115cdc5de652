package app

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/billing"
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
	c, err := e.Config()
	if err != nil {
		return nil, err
	}
	st, err := e.Ledger(ctx)
	if err != nil {
		return nil, err
	}
	bk, err := e.BookingStore(ctx)
	if err != nil {
		return nil, err
	}
	bs := bk.Store
	cluster, err := e.ClusterName(ctx)
	if err != nil {
		return nil, err
	}
	return &billing.BookingCharger{
		Cluster: cluster, Ledger: st, Policy: meter.Cancellation{FreeBefore: c.Bookings.Cancellation.FreeBefore.Duration},
		Bookings: func(ctx context.Context) ([]meter.BookedWindow, []string, error) {
			all, err := bs.List(ctx, reserve.Filter{})
			if err != nil {
				return nil, nil, err
			}
			ws, un := BookedWindows(all)
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

// BookedWindows reduces bookings to what their charge needs; the ones it
// cannot charge are named with the reason.
//
// A GPU booking is one window: Count GPUs of its type. A whole-node
// booking is one window per GPU type of its class: Count × the GPUs per
// node of that type that admission recorded on it (Booking.PerNode), never
// the cluster as it is now; a class without GPUs is one window of no GPUs
// (it charges nothing, and reverses what an earlier figure charged). A
// node booking stored before admission recorded the figure is named, not
// charged: its GPUs per node are not known.
func BookedWindows(bs []reserve.Booking) ([]meter.BookedWindow, []string) {
	var out []meter.BookedWindow
	var un []string
	for _, b := range bs {
		switch {
		case b.Kind == reserve.KindNode && b.PerNode == nil:
			un = append(un, fmt.Sprintf("booking %d (%s, whole nodes) was admitted before gpubridge recorded the GPUs per node of a node booking, so its GPUs are not known; "+
				"record them (the GPUs per node its class had) with `gpubridge modify booking %d set pernode=TYPE:COUNT` (e.g. pernode=h100:8), "+
				"then charge again", b.ID, b.What(), b.ID))
			continue
		case b.Cancelled() && b.CancelledAt.IsZero():
			un = append(un, fmt.Sprintf("booking %d is cancelled without a cancel time", b.ID))
			continue
		}
		w := meter.BookedWindow{ID: b.ID, Account: strings.ToLower(b.Tenant), Type: b.GPUType, Count: int64(b.Count),
			Start: b.Start.Unix(), End: b.End.Unix()}
		if b.Cancelled() {
			w.CancelledAt = b.CancelledAt.Unix()
		}
		if b.Kind != reserve.KindNode {
			out = append(out, w)
			continue
		}
		n := 0
		for _, t := range slices.Sorted(maps.Keys(b.PerNode)) {
			if b.PerNode[t] <= 0 {
				continue
			}
			tw := w
			tw.Type, tw.Count = t, int64(b.Count)*int64(b.PerNode[t])
			out = append(out, tw)
			n++
		}
		if n == 0 {
			w.Type, w.Count = "", 0
			out = append(out, w)
		}
	}
	return out, un
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

// bookingCoster is the current rate card's CardCoster, or nil without a
// card (a spend limit then refuses every booking: the cost is unknown).
func bookingCoster(ctx context.Context, db *sqlx.DB) reserve.Coster {
	card, ok, err := ratecard.NewDB(db).Current(ctx)
	if err != nil || !ok {
		return nil
	}
	return CardCoster{card}
}
