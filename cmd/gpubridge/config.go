package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/slurmconf"
	"github.com/gpubridge/gpubridge/bridge/slurmconf/slurmadapter"
	"github.com/gpubridge/gpubridge/internal/config"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
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

// configSpecFlags are the flags of `config render` and `config check`.
type configSpecFlags struct {
	nodes, types string
	poolTier     int
	odTier       int
	odQOS        string
}

func (f *configSpecFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.nodes, "nodes", "", "GPU nodes of both partitions (default: the nodes with GPUs, from slurmrestd)")
	cmd.Flags().StringVar(&f.types, "gpu-types", "", "typed GPUs to track (default: the types the nodes report)")
	cmd.Flags().IntVar(&f.poolTier, "pool-tier", 10, "PriorityTier of the pool partition")
	cmd.Flags().IntVar(&f.odTier, "ondemand-tier", 1, "PriorityTier of the on-demand partition")
	cmd.Flags().StringVar(&f.odQOS, "ondemand-partition-qos", "", "partition QOS of the on-demand partition (only for the submit-time route)")
}

// spec builds the render spec from the flags and the configuration, reading
// what they leave out from slurmrestd.
func (f *configSpecFlags) spec(ctx context.Context, a *App, c config.Config) (slurmconf.Spec, error) {
	s := slurmconf.Spec{
		PoolPartition: c.Tenants.PoolPartition, OnDemandPartition: c.Tenants.OnDemandPartition,
		Nodes: kv.List(f.nodes), GPUTypes: kv.List(f.types), PoolTier: f.poolTier, OnDemandTier: f.odTier,
		OnDemandPartitionQOS: f.odQOS, PoolDefault: true,
	}
	s, err := slurmconf.Complete(ctx, s, a.slurmConfREST())
	if err != nil {
		return s, fmt.Errorf("%w (or give --nodes and --gpu-types)", err)
	}
	return s, nil
}

// slurmConfREST reads the cluster for slurmconf through slurmrestd,
// connecting on the first read.
func (a *App) slurmConfREST() slurmadapter.REST {
	return slurmadapter.REST{Connect: func(ctx context.Context) (slurmadapter.Client, error) {
		cl, err := a.Slurm(ctx)
		if err != nil {
			return nil, err
		}
		return cl, nil
	}}
}

func configRenderCmd(a *App) *cobra.Command {
	var f configSpecFlags
	cmd := &cobra.Command{
		Use:   "render",
		Short: "Print the slurm.conf fragment of the two tiers (pool, on-demand), preemption and typed GPU TRES",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.Config()
			if err != nil {
				return err
			}
			s, err := f.spec(cmd.Context(), a, c)
			if err != nil {
				return err
			}
			frag, err := slurmconf.Render(s)
			if err != nil {
				return err
			}
			if a.output.JSON {
				return a.Print(table.Table{Raw: frag})
			}
			_, err = fmt.Fprint(a.out, frag.Text)
			return err
		},
	}
	f.add(cmd)
	return cmd
}

func configCheckCmd(a *App) *cobra.Command {
	var f configSpecFlags
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
			ctx := cmd.Context()
			c, err := a.Config()
			if err != nil {
				return err
			}
			s, err := f.spec(ctx, a, c)
			if err != nil {
				return err
			}
			fs, err := slurmconf.CheckLive(ctx, s, slurmconf.LiveReader{
				Scontrol: slurmadapter.NewScontrol(scontrol), REST: a.slurmConfREST(), Logger: a.Logger(),
			})
			if err != nil {
				return err
			}
			if err := a.Print(slurmconf.FindingsTable(fs)); err != nil {
				return err
			}
			return slurmconf.Verdict(fs, allowUnknown)
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&allowUnknown, "allow-unknown", false, "exit 0 when settings could not be verified (status unknown), as long as none differs")
	cmd.Flags().StringVar(&scontrol, "scontrol", "scontrol", "command that runs scontrol, split on spaces (e.g. \"ssh head scontrol\"); empty reads slurmrestd only")
	return cmd
}
