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
Every show takes format=COL,... and where COL=VALUE filters; modify takes
its changes after set. Files are given with -f FILE (file=FILE too).
Exit status: 0 done, 1 error, 2 invalid input (nothing changed; plan
--detailed-exitcode: 2 means there are changes). See docs/cli.md.

Configuration: --config FILE, else $GPUBRIDGE_CONFIG, else /etc/gpubridge/gpubridge.yaml
(optional), overridden by GPUBRIDGE_* environment variables.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          unknownSub,
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	// -p is -P with a trailing '|': code that asks for the parsable form
	// asks Parsable.
	root.PersistentPreRun = func(*cobra.Command, []string) { a.output.Parsable = a.output.Parsable || a.output.Trailing }
	root.SetVersionTemplate("gpubridge {{.Version}}\n")
	root.SetFlagErrorFunc(flagError)
	pf := root.PersistentFlags()
	pf.StringVar(&a.ConfigPath, "config", "", "configuration file (default /etc/gpubridge/gpubridge.yaml)")
	pf.StringVarP(&a.ClusterFlag, "cluster", "M", "", "the cluster to use, of those the configuration's clusters: lists (needed when it lists several)")
	pf.BoolVarP(&a.output.Parsable, "parsable2", "P", false, "output '|'-separated fields, no trailing '|'")
	pf.BoolVarP(&a.output.Trailing, "parsable", "p", false, "output '|'-separated fields with a trailing '|'")
	pf.BoolVarP(&a.output.NoHeader, "noheader", "n", false, "no header line")
	pf.BoolVar(&a.output.JSON, "json", false, "output JSON")
	pf.BoolVarP(&a.immediate, "immediate", "i", false, "commit changes without asking")
	pf.BoolVarP(&a.Verbose, "verbose", "v", false, "log everything (debug) on stderr; without it commands log only warnings")

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
	registerCredits(a, root)
	registerInitDB(a, root)
	registerCompletion(a, root)
	registerMan(a, root)
	registerDump(a, root)
	registerTokens(a, show, add, del)
	completeKeys(a, root)
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
