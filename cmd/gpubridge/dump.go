package main

import (
	"fmt"

	"github.com/spf13/cobra"
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
			// What it wrote is printed before a failure after it.
			d, err := a.Dump(cmd.Context(), cmd.CommandPath(), dir)
			if _, perr := fmt.Fprint(a.out, d.Text()); perr != nil {
				return perr
			}
			return err
		},
	}
	cmd.Flags().StringVarP(&dir, "file", "f", "", "directory to write tenants.yaml and ratecard.yaml into (default: the tenants file on standard output)")
	return cmd
}
