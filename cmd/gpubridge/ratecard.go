package main

import (
	"cmp"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/internal/app"
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.noNames(args, ratecard.Table(pricing.Card{}, time.Now())); err != nil {
				return err
			}
			card, err := a.RateCard(cmd.Context())
			if err != nil {
				return err
			}
			return a.Print(ratecard.Table(card, time.Now()))
		},
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.noNames(args, ratecard.Table(pricing.Card{}, time.Now())); err != nil {
				return err
			}
			card, err := a.RateCard(cmd.Context())
			if err != nil {
				return err
			}
			if ts, note := ratecard.Views(card, time.Now(), a.output); ts != nil {
				return a.printViews(ts, note)
			}
			doc, err := ratecard.Document(card)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(a.out, doc)
			return err
		},
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
		RunE: func(cmd *cobra.Command, args []string) error {
			ka, err := keyArgs(args, "file")
			if err != nil {
				return err
			}
			path, err := fileArg(file, ka)
			if err != nil || path == "" {
				return cmp.Or(err, usagef("load ratecard needs -f FILE"))
			}
			card, changed, err := a.LoadRateCard(cmd.Context(), path, func(c pricing.Card) error {
				return a.Confirm(ratecard.LoadPrompt(c))
			})
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(a.out, ratecard.Loaded(card, changed))
			return err
		},
	}
	fileFlag(cmd, &file, "the rate card file (YAML or JSON)")
	return cmd
}

func addRateCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "rate type=TYPE price=DECIMAL from=YYYY-MM-DD [tier=reserved|ondemand|booked] [currency=EUR]",
		Short: "Add (or replace) a rate per GPU-hour",
		Long:  rateCardHelp + "\n\ncurrency= is needed only for the first rate (it creates the card).",
		RunE: func(cmd *cobra.Command, args []string) error {
			ka, err := keyArgs(args, "type", "tier", "price", "from", "currency")
			if err != nil {
				return err
			}
			r, next, err := a.AddRate(cmd.Context(), ka.Where)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(a.out, ratecard.RateAdded(r, next.Currency))
			return err
		},
	}
}

func deleteRateCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "rate type=TYPE from=YYYY-MM-DD [tier=reserved|ondemand|booked]",
		Short: "Remove a rate from the rate card",
		RunE: func(cmd *cobra.Command, args []string) error {
			ka, err := keyArgs(args, "type", "tier", "from")
			if err != nil {
				return err
			}
			err = a.DeleteRate(cmd.Context(), ka.Where, func(k app.RateKey) error {
				return a.Confirm(ratecard.DeletePrompt(k.Type, k.Tier, k.From))
			})
			if err != nil {
				return err
			}
			fmt.Fprintln(a.out, "rate removed")
			return nil
		},
	}
}

func addGPUTypeCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "gputype name=PROFILE parent=GPU [slices=N] [parentslices=7]",
		Short: "Declare a MIG profile's parent GPU, so it is priced at the parent's rate × slices/7",
		RunE: func(cmd *cobra.Command, args []string) error {
			ka, err := keyArgs(args, "name", "parent", "slices", "parentslices")
			if err != nil {
				return err
			}
			t, err := a.AddGPUType(cmd.Context(), ka.Where)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(a.out, ratecard.GPUTypeAdded(t))
			return err
		},
	}
}
