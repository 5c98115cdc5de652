package main

import (
	"cmp"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
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
			st, err := a.cardStore(cmd.Context())
			if err != nil {
				return err
			}
			card, err := ratecard.Get(cmd.Context(), st)
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
			st, err := a.cardStore(cmd.Context())
			if err != nil {
				return err
			}
			card, err := ratecard.Get(cmd.Context(), st)
			if err != nil {
				return err
			}
			switch {
			case a.output.JSON:
				return a.Print(table.Table{Raw: card})
			case a.output.Parsable || a.output.Format != nil || a.output.Where != nil:
				fmt.Fprintln(a.err, "show ratecard: the rates table (show rates); without -P, -p, format= and where the card as YAML")
				return a.Print(ratecard.Table(card, time.Now()))
			}
			y, err := card.YAML()
			if err != nil {
				return err
			}
			if _, err = a.out.Write(y); err != nil {
				return err
			}
			_, err = io.WriteString(a.out, ratecard.PriceListComment(card))
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
			ka, err := kv.Parse(args, kv.Spec{Keys: []string{"file"}})
			if err != nil {
				return usageError{err}
			}
			path, err := fileArg(file, ka)
			if err != nil || path == "" {
				return cmp.Or(err, usagef("load ratecard needs -f FILE"))
			}
			b, err := ratecard.ReadFile(path)
			if err != nil {
				return cardError(err)
			}
			st, err := a.cardStore(cmd.Context())
			if err != nil {
				return err
			}
			card, changed, err := ratecard.Load(cmd.Context(), st, b, actor(), time.Now(), func(c pricing.Card) error {
				return a.Confirm(fmt.Sprintf(" Replacing the rate card: %s, %d rates, %d GPU types.", c.Currency, len(c.Rates), len(c.Types)))
			})
			if err != nil {
				return cardError(err)
			}
			if !changed {
				fmt.Fprintln(a.out, "rate card unchanged")
				return nil
			}
			fmt.Fprintf(a.out, "rate card loaded: %s, %d rates, %d GPU types\n", card.Currency, len(card.Rates), len(card.Types))
			return nil
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
			ka, err := kv.Parse(args, kv.Spec{Keys: []string{"type", "tier", "price", "from", "currency"}})
			if err != nil {
				return usagef("%v", err)
			}
			w := ka.Where
			if w["type"] == "" || w["price"] == "" || w["from"] == "" {
				return usagef("add rate needs type=, price= and from=")
			}
			r := pricing.Rate{Type: w["type"], Tier: meter.Tier(w["tier"])}
			if r.PerGPUHour, err = pricing.ParsePrice(w["price"]); err != nil {
				return usagef("%v", err)
			}
			if r.From, err = pricing.ParseDate(w["from"]); err != nil {
				return usagef("%v", err)
			}
			st, err := a.cardStore(cmd.Context())
			if err != nil {
				return err
			}
			next, err := ratecard.AddRate(cmd.Context(), st, r, w["currency"], actor(), time.Now())
			if err != nil {
				return cardError(err)
			}
			tier := string(r.Tier)
			if tier == "" {
				tier = "reserved and ondemand"
			}
			fmt.Fprintf(a.out, "rate %s (%s): %s %s per GPU-hour from %s\n", r.Type, tier, r.PerGPUHour, next.Currency, r.From)
			return nil
		},
	}
}

func deleteRateCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "rate type=TYPE from=YYYY-MM-DD [tier=reserved|ondemand|booked]",
		Short: "Remove a rate from the rate card",
		RunE: func(cmd *cobra.Command, args []string) error {
			ka, err := kv.Parse(args, kv.Spec{Keys: []string{"type", "tier", "from"}})
			if err != nil {
				return usagef("%v", err)
			}
			w := ka.Where
			from, err := pricing.ParseDate(w["from"])
			if err != nil || w["type"] == "" {
				return usagef("delete rate needs type= and from=YYYY-MM-DD")
			}
			st, err := a.cardStore(cmd.Context())
			if err != nil {
				return err
			}
			tier := meter.Tier(w["tier"])
			err = ratecard.DeleteRate(cmd.Context(), st, w["type"], tier, from, actor(), time.Now(), func() error {
				return a.Confirm(fmt.Sprintf(" Removing the rate of %s (tier %q) from %s.", w["type"], w["tier"], from))
			})
			if err != nil {
				return cardError(err)
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
			ka, err := kv.Parse(args, kv.Spec{Keys: []string{"name", "parent", "slices", "parentslices"}})
			if err != nil {
				return usagef("%v", err)
			}
			w := ka.Where
			t := pricing.GPUType{Name: w["name"], Parent: w["parent"]}
			if t.Name == "" || t.Parent == "" {
				return usagef("add gputype needs name= and parent=")
			}
			for k, dst := range map[string]*int{"slices": &t.Slices, "parentslices": &t.ParentSlices} {
				if v, ok := w[k]; ok {
					if *dst, err = strconv.Atoi(v); err != nil {
						return usagef("%s=%s: want a number", k, v)
					}
				}
			}
			st, err := a.cardStore(cmd.Context())
			if err != nil {
				return err
			}
			if _, err := ratecard.AddGPUType(cmd.Context(), st, t, actor(), time.Now()); err != nil {
				return cardError(err)
			}
			fmt.Fprintf(a.out, "GPU type %s: a MIG profile of %s\n", t.Name, t.Parent)
			return nil
		},
	}
}
