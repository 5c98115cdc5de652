package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/money"
)

// chargeCmd is `gpubridge charge bookings`: the booking charges written
// once (the daemon's booking-charges job runs the same use case).
func chargeCmd(a *App) *cobra.Command {
	c := verb("charge", "Write charges to the ledger")
	c.AddCommand(&cobra.Command{
		Use:   "bookings",
		Short: "Charge every booking (booked GPUs x window, booked rate) into the ledger",
		Long: `charge bookings computes each booking's charge (its GPUs times its window,
split at month boundaries in UTC, under the cancellation policy
bookings.cancellation.freeBefore) and writes what the ledger lacks: a re-run
writes nothing; a booking changed or cancelled since gets correction lines
(in the next open period when its month is closed). The daemon does the same
on schedules.bookingCharges, and close does it before it checks a period.
Whole-node bookings are not charged yet: they are listed and the command
exits 1.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ka, err := kv.Parse(args, kv.Spec{})
			if err != nil || len(ka.Names) > 0 {
				return usagef("charge bookings takes no arguments")
			}
			ch, err := a.bookingCharger(cmd.Context())
			if err != nil {
				return err
			}
			res, err := ch.Charge(cmd.Context())
			fmt.Fprintf(a.out, "charged %d booking(s): %d ledger line(s) written, %d correction(s), %d in a later period\n",
				res.Bookings-len(res.Uncharged), res.Lines, res.Corrections, res.Adjustments)
			return err
		},
	})
	return c
}

// bookingCharger charges the booking store's bookings into the ledger.
func (a *App) bookingCharger(ctx context.Context) (*billing.BookingCharger, error) {
	c, err := a.Config()
	if err != nil {
		return nil, err
	}
	st, err := a.Ledger(ctx)
	if err != nil {
		return nil, err
	}
	bk, err := a.bookingStore(ctx)
	if err != nil {
		return nil, err
	}
	bs := bk.Store
	return &billing.BookingCharger{
		Cluster: c.Cluster, Ledger: st, Policy: meter.Cancellation{FreeBefore: c.Bookings.Cancellation.FreeBefore.Duration},
		Bookings: func(ctx context.Context) ([]meter.BookedWindow, []string, error) {
			all, err := bs.List(ctx, reserve.Filter{})
			if err != nil {
				return nil, nil, err
			}
			ws, un := bookedWindows(all)
			return ws, un, nil
		},
	}, nil
}

// bookedWindows reduces bookings to what their charge needs; the ones it
// cannot charge are named with the reason.
func bookedWindows(bs []reserve.Booking) ([]meter.BookedWindow, []string) {
	var out []meter.BookedWindow
	var un []string
	for _, b := range bs {
		switch {
		case b.Kind == reserve.KindNode:
			un = append(un, fmt.Sprintf("booking %d (%s, whole nodes): node bookings are not charged yet", b.ID, b.What()))
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
		out = append(out, w)
	}
	return out, un
}

// cardCoster prices bookings with the rate card's booked tier (a tenant's
// monthly spend limit counts them): reserve.Coster.
type cardCoster struct{ card pricing.Card }

func (c cardCoster) BookedCost(typ string, gpuSeconds int64, at time.Time) (money.Amount, error) {
	q, err := c.card.Quote(typ, meter.Booked, at.Unix())
	if err != nil {
		return money.Amount{}, err
	}
	return c.card.Amount(q, gpuSeconds)
}

// bookingCoster is the current rate card's cardCoster, or nil without a
// card (a spend limit then refuses every booking: the cost is unknown).
func bookingCoster(ctx context.Context, db *sqlx.DB) reserve.Coster {
	card, ok, err := ratecard.NewDB(db).Current(ctx)
	if err != nil || !ok {
		return nil
	}
	return cardCoster{card}
}
