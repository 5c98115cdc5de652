package main

import (
	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/internal/kv"
)

func exportChargebackCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "chargeback period=YYYY-MM [format=csv|json|focus] [tenant=NAME] [detail=jobs] [file=PATH]",
		Short: "Export a period's chargeback: summary per tenant, GPU type and tier, or job line items",
		Long: `Writes the chargeback of one billing period to stdout (or file=):
  format=csv    summary rows per tenant, GPU type, tier (and rate), with
                GPU-seconds, GPU-hours, rate per GPU-hour and amount
  format=json   the summary, per-tenant totals and the grand total
  format=focus  a FinOps FOCUS (1.0 columns) CSV for finance tools
detail=jobs adds the job line items (CSV and FOCUS then hold one row per
ledger line). Amounts are in the rate card's currency, each line rounded
once; totals are sums of lines. A closed period is exported with the rate
card and tenant labels stored when it was closed: the same bytes every time.
An open period (month to date) includes the accrued use of running jobs.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ka, err := kv.Parse(args, kv.Spec{Keys: []string{"period", "format", "tenant", "account", "detail", "file"}})
			if err != nil {
				return usagef("%v", err)
			}
			if len(ka.Names) > 0 {
				return usagef("unexpected %q", ka.Names[0])
			}
			pv, ok := ka.Where["period"]
			if !ok {
				return usagef("export chargeback needs period=YYYY-MM")
			}
			p, err := periodArg(pv)
			if err != nil {
				return err
			}
			f := export.CSV
			if v, ok := ka.Where["format"]; ok {
				if f, err = export.ParseFormat(v); err != nil {
					return usagef("%v", err)
				}
			}
			opts := export.Options{Format: f}
			switch ka.Where["detail"] {
			case "", "none", "summary":
			case "jobs":
				opts.Detail = true
			default:
				return usagef("detail=%s: want jobs", ka.Where["detail"])
			}
			books, err := a.books(cmd.Context())
			if err != nil {
				return err
			}
			return books.Export(cmd.Context(), p, accountArg(ka.Where), opts, ka.Where["file"], a.out)
		},
	}
}
