package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
	"github.com/gpubridge/gpubridge/internal/kv"
)

const rateCardHelp = `The rate card prices one GPU-hour per GPU type (or MIG profile) and tier
(reserved, ondemand; none = both of them; booked = booking charges, which
only a rate naming tier=booked prices) in one currency, from a date (UTC)
on. A MIG profile without its own rate costs its parent GPU's rate × compute
slices / 7; declare the parent with "gpubridge add gputype name=1g.10gb
parent=h100". Prices are decimals (up to 9 places), never floats.`

func showRatesCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:     "rates [where COL=VALUE ...] [format=COL,...]",
		Aliases: []string{"rate"},
		Short:   "The rate card's rates, and the MIG profiles priced from their parent",
		Long:    rateCardHelp,
		RunE: a.do(onlyFilters(ratecard.Table(pricing.Card{}, time.Now())), func(ctx context.Context, _ kv.Args) error {
			return shows(a, app.RateCardAt.Table)(a.RateCard(ctx))
		}),
	}
}

func showRateCardCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "ratecard",
		Short: "Print the current rate card as YAML (the form load ratecard reads), with its FOCUS price list",
		Long: `Prints the rate card as YAML, the form "load ratecard" reads, followed by
its FOCUS price list as comments: each SkuPriceId (gpu-TYPE-TIER, the same
in every month and in summary and detail exports), its SkuId and its price
per GPU-hour from each date. With --json it prints the card as one JSON
object, which "load ratecard" reads too; with -P, -p, format= or where, the
price list as "show rates" prints it.`,
		RunE: a.do(onlyFilters(ratecard.Table(pricing.Card{}, time.Now())), func(ctx context.Context, _ kv.Args) error {
			return prints(a, app.RateCardAt.Printout)(a.RateCard(ctx))
		}),
	}
}

func loadRateCardCmd(a *App) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "ratecard -f FILE",
		Short: "Replace the rate card with a YAML file",
		Long: rateCardHelp + `

Example file:
  version: 1
  currency: EUR
  types:
    - {name: 1g.10gb, parent: h100}
  rates:
    - {type: h100, tier: reserved, perGPUHour: "2.10", from: 2026-01-01}
    - {type: h100, tier: ondemand, perGPUHour: "3.50", from: 2026-01-01}`,
		RunE: a.do(takes{Spec: kv.Spec{Keys: []string{"file"}}}, func(ctx context.Context, p kv.Args) error {
			path, err := app.ParseLoadRateCard(file, p.Where)
			if err != nil {
				return err
			}
			return tells(a, app.LoadedCard.Text)(a.LoadRateCard(ctx, path, a.Confirm))
		}),
	}
	fileFlag(cmd, &file, "the rate card file (YAML or JSON)")
	return cmd
}

func addRateCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "rate type=TYPE price=DECIMAL from=YYYY-MM-DD [tier=reserved|ondemand|booked] [currency=EUR]",
		Short: "Add (or replace) a rate per GPU-hour",
		Long:  rateCardHelp + "\n\ncurrency= is needed only for the first rate (it creates the card).",
		RunE: a.do(takes{Spec: kv.Spec{Keys: []string{"type", "tier", "price", "from", "currency"}}}, func(ctx context.Context, p kv.Args) error {
			r, err := app.ParseAddRate(p.Where)
			if err != nil {
				return err
			}
			return tells(a, app.AddedRate.Text)(a.AddRate(ctx, r))
		}),
	}
}

func deleteRateCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "rate type=TYPE from=YYYY-MM-DD [tier=reserved|ondemand|booked]",
		Short: "Remove a rate from the rate card",
		RunE: a.do(takes{Spec: kv.Spec{Keys: []string{"type", "tier", "from"}}}, func(ctx context.Context, p kv.Args) error {
			k, err := app.ParseRateKey(p.Where)
			if err != nil {
				return err
			}
			return tells(a, app.RateKey.Removed)(a.DeleteRate(ctx, k, a.Confirm))
		}),
	}
}

func addGPUTypeCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "gputype name=PROFILE parent=GPU [slices=N] [parentslices=7]",
		Short: "Declare a MIG profile's parent GPU, so it is priced at the parent's rate × slices/7",
		RunE: a.do(takes{Spec: kv.Spec{Keys: []string{"name", "parent", "slices", "parentslices"}}}, func(ctx context.Context, p kv.Args) error {
			t, err := app.ParseGPUType(p.Where)
			if err != nil {
				return err
			}
			return tells(a, ratecard.GPUTypeAdded)(a.AddGPUType(ctx, t))
		}),
	}
}
