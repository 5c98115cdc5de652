package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
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
		RunE: a.do(onlyFilters(slurmrest.NodesTable(nil)), func(ctx context.Context, _ kv.Args) error {
			return shows(a, slurmrest.NodesTable)(a.Nodes(ctx))
		}),
	}
}
