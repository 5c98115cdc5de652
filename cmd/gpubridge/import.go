package main

import (
	"github.com/spf13/cobra"

	tenantview "github.com/gpubridge/gpubridge/bridge/tenantadmin/view"
)

func importCmd(a *App) *cobra.Command {
	var marked bool
	cmd := &cobra.Command{
		Use:   "import [ACCOUNT ...] [--marked]",
		Short: "Adopt existing Slurm accounts as tenants",
		Long: `import reads existing Slurm accounts and stores them as tenants: description,
organization, users (user associations), admins (its coordinators; the
next apply removes their coordinator rights, as tenant admins have none in
Slurm, and a release gives them back) and, when a
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
			return tells(a, tenantview.Imported)(a.ImportTenants(cmd.Context(), cmd.CommandPath(), args, marked, a.confirmer()))
		},
	}
	cmd.Flags().BoolVar(&marked, "marked", false, "import every account carrying gpubridge's marker that is not in the store")
	return cmd
}
