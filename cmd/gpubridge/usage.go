package main

import (
	"context"
	"slices"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
	"github.com/gpubridge/gpubridge/internal/kv"
)

func showUsageCmd(a *App) *cobra.Command {
	return &cobra.Command{
		ValidArgsFunction: completeTenants(a, false),
		Use:               "usage [tenant=NAME] [period=YYYY-MM | start=YYYY-MM [end=YYYY-MM]]",
		Short:             "GPU use and cost per tenant, GPU type and tier (default: this month to date)",
		Long: `Shows the ledger of one billing period (a calendar month, UTC) per tenant,
GPU type and tier: GPU-seconds, GPU-hours, rate and amount. For the current
(open) period it includes the accrued use of jobs still running, as of the
last ingest (run "gpubridge ingest" first for the latest figures).
Adjustments are use of an earlier, already closed period that arrived late.
A GPU type without a rate shows no amount; "gpubridge close" refuses such a
period. An account that is no tenant's is shown as "(no tenant)". tenant=
names a tenant or an account with ledger lines (a former tenant's); one that
is neither exits 2, as "show tenants NAME" does.

Bookings: a booking's charge is a row of kind "booking" (tier booked, its
GPUs x its window at the booked rate); jobs that ran inside the booking's
reservation are rows of tier booked at rate 0, with the booking's id in the
Booking column. Totals count used GPU-seconds (not the booked ones) and
every amount. After the table, each booking's utilization: booked, used and
idle GPU-hours.

start= and end= (months, or the first day of one: 2026-09, 2026-09-01) show
the periods from start up to, not including, end (default: through this
month), each with its totals, like sreport's start= and end=.`,
		RunE: a.do(takes{Spec: kv.Spec{Keys: []string{"tenant", "account", "period", "start", "end"}}, views: views(export.UsageTable(nil, false)),
			names: noName, usage: "unexpected %q: use tenant=NAME", formerTenants: true},
			func(ctx context.Context, p kv.Args) error {
				r, err := app.ParseUsage(p.Where)
				if err != nil {
					return err
				}
				sums, err := a.Usage(ctx, r)
				if err == nil && !slices.ContainsFunc(sums, func(s export.Summary) bool { return len(s.Rows) > 0 }) {
					// tenant= naming neither a tenant nor an account with
					// ledger lines in the periods exits 2 (show tenants NAME).
					err = a.knownTenants(ctx, p.Where["tenant"], "; no ledger lines of such an account in the period either")
				}
				return prints(a, app.UsagePrintout)(sums, err)
			}),
	}
}
