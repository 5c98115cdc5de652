package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/tenant"
)

func importCmd(a *App) *cobra.Command {
	var marked bool
	cmd := &cobra.Command{
		Use:   "import [ACCOUNT ...] [--marked]",
		Short: "Adopt existing Slurm accounts as tenants",
		Long: `import reads existing Slurm accounts and stores them as tenants: description,
organization, users (user associations), admins (coordinators) and, when a
QOS named like the tenant's QOS exists, its quota (typed GPU, cpu and mem
entries of its GrpTRES). The tenants are marked adopted: the next apply may
change their objects (it shows how in plan) and marks them as gpubridge's.
--marked imports every account that carries gpubridge's marker but is not in
the store (after the store was lost or restored from an old backup).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if len(args) == 0 && !marked {
				return usagef("name the accounts to import, or give --marked")
			}
			for _, n := range args {
				if msg := tenant.CheckName(n); msg != "" {
					return problemsError(tenant.Problems{{Field: "account", Msg: msg}})
				}
			}
			cl, err := a.tenantCluster(ctx)
			if err != nil {
				return err
			}
			st, err := a.tenantStore(ctx)
			if err != nil {
				return err
			}
			n, err := a.naming()
			if err != nil {
				return err
			}
			existing, err := st.Names(ctx)
			if err != nil {
				return err
			}
			state, err := cl.ReadState(ctx)
			if err != nil {
				return err
			}
			names := slices.Clone(args)
			if marked {
				for _, acct := range state.Accounts {
					if tenant.IsMarked(acct.Description) && !slices.Contains(existing, acct.Name) && !slices.Contains(names, acct.Name) {
						names = append(names, acct.Name)
					}
				}
			}
			for _, nm := range names {
				if slices.Contains(existing, nm) {
					return usagef("%s is already a tenant", nm)
				}
			}
			if len(names) == 0 {
				fmt.Fprintln(a.out, "Nothing to import.")
				return nil
			}
			ts, notes, err := reconcile.Import(state, names, n)
			if err != nil {
				return usageError{err}
			}
			types, err := cl.GPUTypes(ctx)
			if err != nil {
				return err
			}
			if ps := tenant.ValidateSet(ts, existing, tenant.Rules{GPUTypes: types, Naming: n}, true); len(ps) > 0 {
				return problemsError(ps, "these Slurm objects cannot become tenants as they are")
			}
			var b strings.Builder
			for _, t := range ts {
				b.WriteString(describeTenant(" Importing account as tenant", t))
			}
			for _, note := range notes {
				fmt.Fprintf(&b, " Note: %s\n", note)
			}
			if err := a.Confirm(b.String()); err != nil {
				return err
			}
			if _, err := st.Put(ctx, actor(), ts); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "Imported %s. `gpubridge plan` shows how apply will align and mark their Slurm objects.\n", strings.Join(names, ", "))
			return nil
		},
	}
	cmd.Flags().BoolVar(&marked, "marked", false, "import every account carrying gpubridge's marker that is not in the store")
	return cmd
}
