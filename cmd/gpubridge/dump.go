package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/internal/atomicfile"
)

func registerDump(a *App, root *cobra.Command) { root.AddCommand(dumpCmd(a)) }

func dumpCmd(a *App) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "dump [-f DIR]",
		Short: "Write the store's policy (tenants, rate card) as files that restore it",
		Long: `dump writes what gpubridge's store holds, the source of truth for policy
(Slurm's objects are made from it), as the files that restore it:

  DIR/tenants.yaml   every tenant with every field (quotas, users, admins,
                     burst and booking policy, descriptions, the adopted
                     mark of imported tenants); tenants being deleted are
                     listed under delete:. Restore: gpubridge apply -f DIR/tenants.yaml
  DIR/ratecard.yaml  the current rate card (not written when there is none).
                     Restore: gpubridge load ratecard -f DIR/ratecard.yaml

Without -f it prints the tenants file on standard output (the rate card:
gpubridge show ratecard). Files are written atomically, mode 0600. The
ledger (usage, invoices) is not policy: back it up with mariadb-dump (see
docs/install.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			svc, err := a.tenantService(cmd, "")
			if err != nil {
				return err
			}
			f, b, err := svc.Dump(ctx)
			if err != nil {
				return tenantErr(err)
			}
			if dir == "" {
				_, err := a.out.Write(b)
				return err
			}
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return usageError{fmt.Errorf("dump -f %s: %w", dir, err)}
			}
			path := filepath.Join(dir, "tenants.yaml")
			if _, err := atomicfile.Write(path, b, atomicfile.Options{Mode: 0o600}); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "wrote %s: %d tenant(s), %d being deleted\n", path, len(f.Tenants), len(f.Delete))
			st, err := a.RateCards(ctx)
			if err != nil {
				return err
			}
			card, err := ratecard.Get(ctx, st)
			path = filepath.Join(dir, "ratecard.yaml")
			switch {
			case errors.Is(err, ratecard.ErrNoCard):
				if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
					return err
				}
				fmt.Fprintf(a.out, "no rate card: %s not written\n", path)
				return nil
			case err != nil:
				return err
			}
			y, err := card.YAML()
			if err != nil {
				return err
			}
			if _, err := atomicfile.Write(path, y, atomicfile.Options{Mode: 0o600}); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "wrote %s: %s, %d rate(s), %d GPU type(s)\n", path, card.Currency, len(card.Rates), len(card.Types))
			return nil
		},
	}
	cmd.Flags().StringVarP(&dir, "file", "f", "", "directory to write tenants.yaml and ratecard.yaml into (default: the tenants file on standard output)")
	return cmd
}
