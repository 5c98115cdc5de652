package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
	"github.com/gpubridge/gpubridge/internal/kv"
)

func closeCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "close period=YYYY-MM [ingest=yes|no]",
		Short: "Close a billing period: its ledger and export never change again",
		Long: `close closes one billing period (a calendar month, UTC). First it re-reads
the period and everything since from Slurm's accounting (ingest=no skips
that), then checks that the period has ended, that the ingest has read past
its end, and that every GPU type used has a rate; it refuses with the list
of unpriced types otherwise. Before the checks it brings the booking charges
up to date (as gpubridge charge bookings does). It stores the rate card and tenant labels the
period was priced with, so its export is the same forever. Use that arrives
later is booked as an adjustment in the next open period.

Closing cannot be undone; it asks first unless -i is given.`,
		RunE: a.do(takes{Spec: kv.Spec{Keys: []string{"period", "ingest"}}, names: noName, usage: "close needs period=YYYY-MM"},
			func(ctx context.Context, p kv.Args) error {
				o, err := app.ParseClose(p.Where)
				if err != nil {
					return err
				}
				o.Confirm = a.Confirm
				return tells(a, app.ClosedPeriod.Text)(a.ClosePeriod(ctx, o, a.out))
			}),
	}
}
