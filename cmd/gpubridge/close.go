package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
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
of unpriced types otherwise. It stores the rate card and tenant labels the
period was priced with, so its export is the same forever. Use that arrives
later is booked as an adjustment in the next open period.

Closing cannot be undone; it asks first unless -i is given.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ka, err := kv.Parse(args, kv.Spec{Keys: []string{"period", "ingest"}})
			if err != nil {
				return usagef("%v", err)
			}
			pv, ok := ka.Where["period"]
			if !ok || len(ka.Names) > 0 {
				return usagef("close needs period=YYYY-MM")
			}
			p, err := periodArg(pv)
			if err != nil {
				return err
			}
			if end := p.End(); time.Now().Before(end) {
				return usagef("%s has not ended: it can be closed from %s", p, end.Format(time.RFC3339))
			}
			ctx := cmd.Context()
			c, err := a.Config()
			if err != nil {
				return err
			}
			st, err := a.ledgerStore(ctx)
			if err != nil {
				return err
			}
			if rec, closed, err := st.Period(ctx, c.Cluster, p); err != nil {
				return err
			} else if closed {
				return fmt.Errorf("%s is already closed (at %s by %s)", p, rec.ClosedAt.Format(time.RFC3339), rec.ClosedBy)
			}
			card, ok, err := st.RateCard(ctx)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("%w: load one first (gpubridge load ratecard file=...)", ledger.ErrNoRateCard)
			}
			if err := a.Confirm(fmt.Sprintf(" Closing period %s of cluster %s: its ledger becomes immutable.", p, c.Cluster)); err != nil {
				return err
			}
			switch ka.Where["ingest"] {
			case "", "yes":
				in, err := a.acctIngester(ctx, "")
				if err != nil {
					return err
				}
				if !a.verbose {
					in.Log = nil
				}
				res, err := in.Ingest(ctx, ingest.Window{From: p.Start()})
				if err != nil {
					return err
				}
				fmt.Fprintf(a.out, "re-read %s..%s: %d ledger lines written\n", res.From.Format(time.RFC3339), res.To.Format(time.RFC3339), res.Stats.Lines)
			case "no":
			default:
				return usagef("ingest=%s: want yes or no", ka.Where["ingest"])
			}
			labels, err := a.tenantLabels(ctx)
			if err != nil {
				return err
			}
			rec, err := ledger.Close(ctx, st, ledger.CloseRequest{Cluster: c.Cluster, Period: p, Now: time.Now(), Actor: actor(), Card: card, Tenants: labels})
			if errors.Is(err, ledger.ErrNotEnded) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.out, "closed %s: %d lines, %d GPU-seconds, %s %s\n", p, rec.Lines, rec.GPUSeconds, rec.Amount.String(), rec.Currency)
			return nil
		},
	}
}
