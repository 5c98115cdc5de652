package main

import (
	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/slurmrest"
)

// registerSlurm adds the commands that talk to slurmrestd: ping, show nodes.
func registerSlurm(a *App, root, show *cobra.Command) {
	root.AddCommand(pingCmd(a))
	show.AddCommand(showNodesCmd(a))
}

func pingCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "ping",
		Short: "Check slurmrestd and the Slurm controllers; print versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return showsPartly(a, slurmrest.PingResult.Table)(a.Ping(cmd.Context()))
		},
	}
}

func showNodesCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "nodes [where COL=VALUE ...] [format=COL,...]",
		Short: "Nodes with their GPUs per type, as slurmctld reports them",
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.noNames(args, slurmrest.NodesTable(nil)); err != nil {
				return err
			}
			return shows(a, slurmrest.NodesTable)(a.Nodes(cmd.Context()))
		},
	}
}
