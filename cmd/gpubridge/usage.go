package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/money"
	"github.com/gpubridge/gpubridge/internal/table"
)

func showUsageCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "usage [tenant=NAME] [period=YYYY-MM]",
		Short: "GPU use and cost per tenant, GPU type and tier (default: this month to date)",
		Long: `Shows the ledger of one billing period (a calendar month, UTC) per tenant,
GPU type and tier: GPU-seconds, GPU-hours, rate and amount. For the current
(open) period it includes the accrued use of jobs still running, as of the
last ingest (run "gpubridge ingest" first for the latest figures).
Adjustments are use of an earlier, already closed period that arrived late.
A GPU type without a rate shows no amount; "gpubridge close" refuses such a
period. An account that is no tenant's is shown as "(no tenant)".`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ka, err := kv.Parse(args, kv.Spec{Keys: []string{"tenant", "account", "period"}})
			if err != nil {
				return usagef("%v", err)
			}
			if len(ka.Names) > 0 {
				return usagef("unexpected %q: use tenant=NAME", ka.Names[0])
			}
			p, err := periodArg(ka.Where["period"])
			if err != nil {
				return err
			}
			books, err := a.books(cmd.Context())
			if err != nil {
				return err
			}
			s, err := books.Summary(cmd.Context(), p, accountArg(ka.Where))
			if err != nil {
				return err
			}
			return a.printUsage(s)
		},
	}
}

func (a *App) printUsage(s export.Summary) error {
	t := table.Table{
		Header: []string{"Period", "Status", "Tenant", "Account", "GPUType", "Tier", "Kind", "UsagePeriod", "GPUHours", "GPUSeconds", "Rate", "Amount", "Currency"},
		Keys:   []string{"period", "status", "tenant", "account", "gpuType", "tier", "kind", "usagePeriod", "gpuHours", "gpuSeconds", "rate", "amount", "currency"},
	}
	status := "open"
	if s.Meta.Closed {
		status = "closed"
	}
	cur := s.Meta.Card.Currency
	for _, r := range s.Rows {
		rate, amount := r.Rate.String(), r.Amount.String()
		if r.Rate < 0 {
			rate, amount = "no rate", "-"
		}
		t.Rows = append(t.Rows, []string{s.Meta.Period.String(), status, r.Tenant, r.Account, r.Type, string(r.Tier), string(r.Kind),
			r.Usage.String(), export.GPUHours(r.GPUSeconds), fmt.Sprint(r.GPUSeconds), rate, amount, cur})
	}
	if !a.output.JSON && !a.output.Parsable {
		// Totals; a total that leaves out use without a rate says so.
		unpriced := map[string]bool{}
		for _, r := range s.Rows {
			if r.Rate < 0 {
				unpriced[r.Account], unpriced["*"] = true, true
			}
		}
		amount := func(account string, v money.Amount) string {
			if unpriced[account] {
				return v.String() + " + unpriced"
			}
			return v.String()
		}
		for _, tt := range s.Tenants() {
			t.Rows = append(t.Rows, []string{s.Meta.Period.String(), status, tt.Tenant, tt.Account, "*", "*", "total", "",
				export.GPUHours(tt.GPUSeconds), fmt.Sprint(tt.GPUSeconds), "", amount(tt.Account, tt.Amount), cur})
		}
		t.Rows = append(t.Rows, []string{s.Meta.Period.String(), status, "*", "*", "*", "*", "total", "",
			export.GPUHours(s.GPUSeconds), fmt.Sprint(s.GPUSeconds), "", amount("*", s.Amount), cur})
	}
	if len(s.Rows) == 0 && !a.output.JSON {
		fmt.Fprintf(a.err, "no GPU use booked in %s yet\n", s.Meta.Period)
	}
	return a.Print(t)
}
