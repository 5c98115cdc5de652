package main

import (
	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/internal/kv"
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
A whole-node booking stored without the GPUs per node that admission
records (before migration 00480) is not charged: it is listed with the fix
and the command exits 1.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if p, err := kv.Parse(args, kv.Spec{}); err != nil || len(p.Names) > 0 {
				return usagef("charge bookings takes no arguments")
			}
			return partly(tells(a, billing.ChargeResult.Summary))(a.ChargeBookings(cmd.Context()))
		},
	})
	return c
}
