package main

import (
	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/slurmconf"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
)

// subcommand returns root's command name, adding it when no other feature
// has (several features hang commands under `config`).
func subcommand(root *cobra.Command, name, short string) *cobra.Command {
	for _, c := range root.Commands() {
		if c.Name() == name {
			return c
		}
	}
	c := verb(name, short)
	root.AddCommand(c)
	return c
}

// slurmConfFlags adds the flags of `config render` and `config check`.
func slurmConfFlags(cmd *cobra.Command, r *app.SlurmConfRequest) {
	cmd.Flags().StringVar(&r.Nodes, "nodes", "", "GPU nodes of both partitions (default: the nodes with GPUs, from slurmrestd)")
	cmd.Flags().StringVar(&r.GPUTypes, "gpu-types", "", "typed GPUs to track (default: the types the nodes report)")
	cmd.Flags().IntVar(&r.PoolTier, "pool-tier", 10, "PriorityTier of the pool partition")
	cmd.Flags().IntVar(&r.OnDemandTier, "ondemand-tier", 1, "PriorityTier of the on-demand partition")
	cmd.Flags().StringVar(&r.OnDemandPartitionQOS, "ondemand-partition-qos", "", "partition QOS of the on-demand partition (only for the submit-time route)")
}

func configRenderCmd(a *App) *cobra.Command {
	var r app.SlurmConfRequest
	cmd := &cobra.Command{
		Use:   "render",
		Short: "Print the slurm.conf fragment of the two tiers (pool, on-demand), preemption and typed GPU TRES",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return says(a, slurmconf.Fragment.String)(a.RenderSlurmConf(cmd.Context(), r))
		},
	}
	slurmConfFlags(cmd, &r)
	return cmd
}

func configCheckCmd(a *App) *cobra.Command {
	var r app.SlurmConfRequest
	var scontrol string
	var allowUnknown bool
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Compare the live cluster with the rendered two-tier configuration",
		Long: `check renders the fragment (as config render does) and compares it with
what the cluster reports: scontrol show config and scontrol show partition
(run with --scontrol, default "scontrol"), or, where scontrol is not
available, slurmrestd's partitions (PreemptType and the global keys are then
unknown). It exits 1 when a setting differs or is missing, and when it could
not verify a setting (status unknown) unless --allow-unknown.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return showsPartly(a, app.SlurmConfCheck.Table)(a.CheckSlurmConf(cmd.Context(), r, scontrol, allowUnknown))
		},
	}
	slurmConfFlags(cmd, &r)
	cmd.Flags().BoolVar(&allowUnknown, "allow-unknown", false, "exit 0 when settings could not be verified (status unknown), as long as none differs")
	cmd.Flags().StringVar(&scontrol, "scontrol", "scontrol", "command that runs scontrol, split on spaces (e.g. \"ssh head scontrol\"); empty reads slurmrestd only")
	return cmd
}
