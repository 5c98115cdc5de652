package main

import (
	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/slurmrest"
	"github.com/gpubridge/gpubridge/internal/app"
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
			p, err := a.Ping(cmd.Context())
			if err != nil {
				return err
			}
			if err := a.Print(p.Table()); err != nil {
				return err
			}
			return app.PingError(p)
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
			nodes, err := a.Nodes(cmd.Context())
			if err != nil {
				return err
			}
			return a.Print(slurmrest.NodesTable(nodes))
		},
	}
}
