package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newRootCmd(a *App) *cobra.Command {
	root := &cobra.Command{
		Use:   "gpubridge",
		Short: "Multi-tenant GPU pools on Slurm: tenants, quotas, bursts, MIG GRES and chargeback",
		Long: `gpubridge turns one pooled Slurm GPU cluster into a multi-tenant one.

Commands follow sacctmgr: gpubridge <verb> <entity> [name] [key=value ...].
Configuration: --config FILE, else $GPUBRIDGE_CONFIG, else /etc/gpubridge/gpubridge.yaml
(optional), overridden by GPUBRIDGE_* environment variables.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.configPath, "config", "", "configuration file (default /etc/gpubridge/gpubridge.yaml)")
	pf.BoolVarP(&a.output.Parsable, "parsable2", "P", false, "output '|'-separated fields, no trailing '|'")
	pf.BoolVarP(&a.output.NoHeader, "noheader", "n", false, "no header line")
	pf.BoolVar(&a.output.JSON, "json", false, "output JSON")
	pf.BoolVarP(&a.immediate, "immediate", "i", false, "commit changes without asking")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "debug logging on stderr")

	show := verb("show", "Display entities (nodes, tenants, usage, ...)", "list")
	add := verb("add", "Add entities (tenant, user, ...)", "create")
	modify := verb("modify", "Modify entities", "update")
	del := verb("delete", "Delete entities", "remove")

	root.AddCommand(versionCmd(), serveCmd(a), migrateCmd(a), show, add, modify, del)

	// Each feature registers its commands here, one line per constructor.
	registerSlurm(a, root, show)
	registerGres(a, root)
	registerBurst(a, root, show)
	registerTenants(a, root, show, add, modify, del)
	registerAccounting(a, root)
	registerBookings(a, root, show, add, modify, del)
	registerHealth(a, root, show)
	registerInitDB(a, root)
	registerCompletion(a, root)
	registerMan(a, root)
	registerTokens(a, show, add, del)
	return root
}

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print gpubridge's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "gpubridge %s\n", version)
			return err
		},
	}
}
