package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/tenant"
	tenantview "github.com/gpubridge/gpubridge/bridge/tenantadmin/view"
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
the store (after the store was lost or restored from an old backup).

import also records what an adopted account held (its description and
organization, its users' QOS lists and default QOS, its coordinators, the QOS
if it existed): ` + "`gpubridge delete tenant`" + ` then releases the account, removing
only what gpubridge added and putting back what it changed (--purge deletes
it whole).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !marked {
				return usagef("name the accounts to import, or give --marked")
			}
			svc, err := a.tenantService(cmd, "")
			if err != nil {
				return err
			}
			names, err := svc.Import(cmd.Context(), args, marked, func(ts []tenant.Tenant, notes []string) error {
				var b strings.Builder
				for _, t := range ts {
					b.WriteString(tenantview.Tenant(" Importing account as tenant", t))
				}
				for _, note := range notes {
					fmt.Fprintf(&b, " Note: %s\n", note)
				}
				return a.Confirm(b.String())
			})
			if err != nil {
				return tenantErr(err)
			}
			if len(names) == 0 {
				fmt.Fprintln(a.out, "Nothing to import.")
				return nil
			}
			fmt.Fprintf(a.out, "Imported %s. `gpubridge plan` shows how apply will align and mark their Slurm objects.\n", strings.Join(names, ", "))
			return nil
		},
	}
	cmd.Flags().BoolVar(&marked, "marked", false, "import every account carrying gpubridge's marker that is not in the store")
	return cmd
}
