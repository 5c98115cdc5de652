package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
)

const rateCardHelp = `The rate card prices one GPU-hour per GPU type (or MIG profile) and tier
(reserved, ondemand; none = both) in one currency, from a date (UTC) on. A
MIG profile without its own rate costs its parent GPU's rate × compute
slices / 7; declare the parent with "gpubridge add gputype name=1g.10gb
parent=h100". Prices are decimals (up to 9 places), never floats.`

// currentCard returns the stored rate card; ok is false when none exists.
func (a *App) currentCard(ctx context.Context) (*ledger.DB, pricing.Card, bool, error) {
	st, err := a.ledgerStore(ctx)
	if err != nil {
		return nil, pricing.Card{}, false, err
	}
	c, ok, err := st.RateCard(ctx)
	return st, c, ok, err
}

func cardError(err error) error {
	if _, ok := err.(pricing.ValidationError); ok {
		return usageError{err}
	}
	return err
}

func showRatesCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:     "rates",
		Aliases: []string{"rate"},
		Short:   "The rate card's rates, and the MIG profiles priced from their parent",
		Long:    rateCardHelp,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, card, ok, err := a.currentCard(cmd.Context())
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("%w: load one (gpubridge load ratecard file=...) or add rates (gpubridge add rate ...)", ledger.ErrNoRateCard)
			}
			t := table.Table{
				Header: []string{"GPUType", "Tier", "PerGPUHour", "Currency", "From", "Basis"},
				Keys:   []string{"gpuType", "tier", "perGPUHour", "currency", "from", "basis"},
			}
			for _, r := range card.Rates {
				tier := string(r.Tier)
				if tier == "" {
					tier = "*"
				}
				t.Rows = append(t.Rows, []string{r.Type, tier, r.PerGPUHour.String(), card.Currency, r.From.String(), "own rate"})
			}
			now := time.Now().Unix()
			for _, ty := range card.Types {
				if ty.Parent == "" {
					continue
				}
				for _, tier := range meter.Tiers {
					q, err := card.Quote(ty.Name, tier, now)
					if err != nil {
						t.Rows = append(t.Rows, []string{ty.Name, string(tier), "no rate", card.Currency, "", "parent " + ty.Parent + " has no rate today"})
						continue
					}
					if q.Basis == ty.Name {
						continue // has its own rate, listed above
					}
					t.Rows = append(t.Rows, []string{ty.Name, string(tier), q.UnitPrice().String(), card.Currency, q.From.String(), q.Basis})
				}
			}
			return a.Print(t)
		},
	}
}

func showRateCardCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "ratecard",
		Short: "Print the current rate card as YAML (the form load ratecard reads)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, card, ok, err := a.currentCard(cmd.Context())
			if err != nil {
				return err
			}
			if !ok {
				return ledger.ErrNoRateCard
			}
			y, err := card.YAML()
			if err != nil {
				return err
			}
			_, err = a.out.Write(y)
			return err
		},
	}
}

func loadRateCardCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "ratecard file=PATH",
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
			if err != nil || ka.Where["file"] == "" {
				return usagef("load ratecard needs file=PATH")
			}
			b, err := os.ReadFile(ka.Where["file"])
			if err != nil {
				return err
			}
			card, err := pricing.ParseYAML(b)
			if err != nil {
				return cardError(err)
			}
			st, old, had, err := a.currentCard(cmd.Context())
			if err != nil {
				return err
			}
			if had {
				oy, _ := old.YAML()
				ny, _ := card.YAML()
				if string(oy) == string(ny) {
					fmt.Fprintln(a.out, "rate card unchanged")
					return nil
				}
			}
			if err := a.Confirm(fmt.Sprintf(" Replacing the rate card: %s, %d rates, %d GPU types.", card.Currency, len(card.Rates), len(card.Types))); err != nil {
				return err
			}
			if err := st.SaveRateCard(cmd.Context(), card, actor(), time.Now()); err != nil {
				return cardError(err)
			}
			fmt.Fprintf(a.out, "rate card loaded: %s, %d rates, %d GPU types\n", card.Currency, len(card.Rates), len(card.Types))
			return nil
		},
	}
}

func addRateCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "rate type=TYPE price=DECIMAL from=YYYY-MM-DD [tier=reserved|ondemand] [currency=EUR]",
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
			st, card, had, err := a.currentCard(cmd.Context())
			if err != nil {
				return err
			}
			if !had {
				if w["currency"] == "" {
					return usagef("there is no rate card yet: give currency= (e.g. currency=EUR) with the first rate")
				}
				card = pricing.Card{Version: pricing.CurrentVersion, Currency: w["currency"]}
			} else if w["currency"] != "" && w["currency"] != card.Currency {
				return usagef("currency=%s: the rate card is in %s (load a new card to change currency)", w["currency"], card.Currency)
			}
			next, err := card.WithRate(r)
			if err != nil {
				return cardError(err)
			}
			if err := st.SaveRateCard(cmd.Context(), next, actor(), time.Now()); err != nil {
				return cardError(err)
			}
			tier := string(r.Tier)
			if tier == "" {
				tier = "both tiers"
			}
			fmt.Fprintf(a.out, "rate %s (%s): %s %s per GPU-hour from %s\n", r.Type, tier, r.PerGPUHour, next.Currency, r.From)
			return nil
		},
	}
}

func deleteRateCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "rate type=TYPE from=YYYY-MM-DD [tier=reserved|ondemand]",
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
			st, card, had, err := a.currentCard(cmd.Context())
			if err != nil {
				return err
			}
			if !had {
				return ledger.ErrNoRateCard
			}
			next, found := card.WithoutRate(w["type"], meter.Tier(w["tier"]), from)
			if !found {
				return fmt.Errorf("no rate for type %s, tier %q from %s", w["type"], w["tier"], from)
			}
			if err := a.Confirm(fmt.Sprintf(" Removing the rate of %s (tier %q) from %s.", w["type"], w["tier"], from)); err != nil {
				return err
			}
			if err := st.SaveRateCard(cmd.Context(), next, actor(), time.Now()); err != nil {
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
			st, card, had, err := a.currentCard(cmd.Context())
			if err != nil {
				return err
			}
			if !had {
				return fmt.Errorf("%w: add a rate with currency= first", ledger.ErrNoRateCard)
			}
			next, err := card.WithType(t)
			if err != nil {
				return cardError(err)
			}
			if err := st.SaveRateCard(cmd.Context(), next, actor(), time.Now()); err != nil {
				return cardError(err)
			}
			fmt.Fprintf(a.out, "GPU type %s: a MIG profile of %s\n", t.Name, t.Parent)
			return nil
		},
	}
}
