package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/meter"
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
period. An account that is no tenant's is shown as "(no tenant)".

Bookings: a booking's charge is a row of kind "booking" (tier booked, its
GPUs x its window at the booked rate); jobs that ran inside the booking's
reservation are rows of tier booked at rate 0, with the booking's id in the
Booking column. Totals count used GPU-seconds (not the booked ones) and
every amount. After the table, each booking's utilization: booked, used and
idle GPU-hours.

start= and end= (months, or the first day of one: 2026-09, 2026-09-01) show
the periods from start up to, not including, end (default: through this
month), each with its totals, like sreport's start= and end=.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ka, err := a.showArgs(args, kv.Spec{Keys: []string{"tenant", "account", "period", "start", "end"}}, export.UsageTable(nil, false))
			if err != nil {
				return err
			}
			if len(ka.Names) > 0 {
				return usagef("unexpected %q: use tenant=NAME", ka.Names[0])
			}
			periods, err := periodsArg(ka.Where)
			if err != nil {
				return err
			}
			books, err := a.books(cmd.Context())
			if err != nil {
				return err
			}
			var sums []export.Summary
			for _, p := range periods {
				s, err := books.Summary(cmd.Context(), p, accountArg(ka.Where))
				if err != nil {
					return err
				}
				if len(s.Rows) == 0 && !a.output.JSON {
					fmt.Fprintf(a.err, "no GPU use booked in %s yet\n", s.Meta.Period)
				}
				sums = append(sums, s)
			}
			text := !a.output.JSON && !a.output.Parsable && !a.output.Trailing
			if err := a.Print(export.UsageTable(sums, text)); err != nil {
				return err
			}
			if ut := export.UtilizationTable(sums); text && len(ut.Rows) > 0 && len(a.output.Format) == 0 && len(a.output.Where) == 0 {
				fmt.Fprintln(a.out, "\nBooking utilization (booked GPU-hours vs used by jobs inside the booking):")
				return a.Print(ut)
			}
			return nil
		},
	}
}

// periodsArg reads period=, or start= and end= (months; end exclusive,
// default through this month).
func periodsArg(w map[string]string) ([]meter.Period, error) {
	_, hasStart := w["start"]
	_, hasEnd := w["end"]
	if !hasStart && !hasEnd {
		p, err := periodArg(w["period"])
		return []meter.Period{p}, err
	}
	if _, ok := w["period"]; ok {
		return nil, usagef("give period= or start=/end=, not both")
	}
	if !hasStart {
		return nil, usagef("end=%s needs start= (e.g. start=2026-09 end=%s)", w["end"], w["end"])
	}
	from, err := monthArg("start", w["start"])
	if err != nil {
		return nil, err
	}
	to := meter.PeriodOf(time.Now()).Next()
	if hasEnd {
		if to, err = monthArg("end", w["end"]); err != nil {
			return nil, err
		}
	}
	if to <= from {
		return nil, usagef("end=%s is not after start=%s (end is exclusive: start=%s end=%s shows %s)", to, from, from, from.Next(), from)
	}
	if to-from > 120 {
		return nil, usagef("start=%s end=%s spans %d periods; at most 120", from, to, to-from)
	}
	var ps []meter.Period
	for p := from; p < to; p++ {
		ps = append(ps, p)
	}
	return ps, nil
}

// monthArg reads a month (2026-09) or its first day (2026-09-01): usage is
// kept per calendar month.
func monthArg(key, v string) (meter.Period, error) {
	if p, err := meter.ParsePeriod(v); err == nil {
		return p, nil
	}
	t, err := timeArg(key, v)
	if err != nil {
		return 0, err
	}
	p := meter.PeriodOf(t)
	if !t.Equal(p.Start()) {
		return 0, usagef("%s=%s: usage is kept per calendar month (UTC); give a month such as %s=%s or %s=%s", key, v, key, p, key, p.Next())
	}
	return p, nil
}
