package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
)

func exportChargebackCmd(a *App) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		ValidArgsFunction: completeTenants(a, false),
		Use:               "chargeback period=YYYY-MM [format=csv|json|focus] [tenant=NAME] [detail=jobs] [untenanted=no] [-f FILE] [metadata=PATH]",
		Short:             "Export a period's chargeback: summary per tenant, GPU type and tier, or job line items",
		Long: `Writes the chargeback of one billing period to stdout (or -f FILE, file=):
  format=csv    summary rows per tenant, GPU type, tier (and rate), with
                GPU-seconds, GPU-hours, rate per GPU-hour and amount
  format=json   the summary, per-tenant totals and the grand total
  format=focus  a FinOps FOCUS 1.2 dataset (CSV) for finance tools, with
                its FOCUS metadata (JSON) beside -f FILE as FILE.metadata.json,
                or at metadata=PATH
detail=jobs adds the job line items (CSV and FOCUS then hold one row per
ledger line). The CSV's row_type says what a row is: line (a summary row
or line item), subtotal (one per tenant) or total (the grand total); used
GPU-seconds (gpu_seconds) and those a booking charges for
(booked_gpu_seconds) are separate columns, so each column adds up. Every
row names the tenant's description, organization and cost centre; rows of
accounts without a tenant say has_tenant=false (tenant "(no tenant)"), and
untenanted=no leaves them out. Amounts are in the rate card's currency,
each line rounded once; totals are sums of lines. A closed period is
exported with the rate card and tenant labels (and profiles) stored when it
was closed: the same bytes every time, its metadata included. An open period (month to date) includes the accrued
use of running jobs. The FOCUS provider and issuer names are the
configuration's chargeback.* names. --json is format=json.
The table options -P, -p and -n do not apply to these file formats and are
refused (exit 2): format=csv is the machine-readable export.`,
		RunE: a.do(takes{Spec: kv.Spec{Keys: []string{"period", "format", "tenant", "account", "detail", "file", "metadata", "untenanted"}}, names: noName, usage: "unexpected %q"},
			func(ctx context.Context, p kv.Args) error {
				if err := refuseTableOptions(a.output); err != nil {
					return err
				}
				r, err := app.ParseExportChargeback(p.Where, a.output.JSON, file)
				if err != nil {
					return err
				}
				return a.ExportChargeback(ctx, r, a.out)
			}),
	}
	fileFlag(cmd, &file, "write the export to this file (atomically) instead of stdout")
	return cmd
}

// refuseTableOptions refuses the table output options (-P, -p, -n) that
// export chargeback cannot honour: its formats are files for finance tools
// (RFC 4180 CSV, JSON, FOCUS), not sacctmgr tables, and an option silently
// ignored would hand a pipe-splitting script a comma-separated file.
func refuseTableOptions(o table.Options) error {
	var flag string
	switch {
	case o.Trailing:
		flag = "-p/--parsable"
	case o.Parsable:
		flag = "-P/--parsable2"
	case o.NoHeader:
		flag = "-n/--noheader"
	default:
		return nil
	}
	return app.Inputf("export chargeback: %s does not apply to an export (format=csv writes RFC 4180 comma-separated values, format=json and format=focus their own formats); leave it out", flag)
}
