package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
	"github.com/gpubridge/gpubridge/gres/device"
	"github.com/gpubridge/gpubridge/gres/inventory"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

// registerGres adds the node-ops commands for GPUs and MIG: gres
// inventory, gres generate, gres plan.
func registerGres(a *App, root *cobra.Command) {
	g := &cobra.Command{
		Use:   "gres <inventory|generate|plan>",
		Short: "GPUs and MIG on a node: NVML inventory, gres.conf and slurm.conf lines, MIG layout plans",
		Args:  unknownSub,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("gres needs a subcommand: one of %s", strings.Join(subNames(cmd), ", "))
		},
	}
	g.AddCommand(gresInventoryCmd(a), gresGenerateCmd(a), gresPlanCmd(a))
	root.AddCommand(g)
}

// collectInventory reads the node's GPUs through NVML; tests replace it.
var collectInventory = device.Collect

// listSlurmNodes fetches the nodes as slurmctld sees them (for --check);
// tests replace it.
var listSlurmNodes = func(ctx context.Context, a *App) ([]slurmrest.Node, error) { return a.Nodes(ctx) }

// inventoryFlags adds --fixture and --root, where a gres command reads
// the node's GPUs.
func inventoryFlags(cmd *cobra.Command, s *app.InventorySource) {
	f := cmd.Flags()
	f.StringVar(&s.Fixture, "fixture", "", "read a recorded inventory (the JSON of `gres inventory --json`) instead of NVML")
	f.StringVar(&s.Root, "root", "", "directory that holds proc/driver/nvidia-caps/mig-minors (default /)")
	s.Collect = func(o device.Options) (inventory.Inventory, error) { return collectInventory(o) }
}

func gresInventoryCmd(a *App) *cobra.Command {
	var src app.InventorySource
	cmd := &cobra.Command{
		Use:   "inventory",
		Short: "Show the node's GPUs and MIG devices as NVML reports them (read-only)",
		Long: `Show the node's GPUs and MIG devices as NVML reports them: index, minor number, UUID,
product name, memory, MIG mode (current and pending), and per MIG device its GPU and compute
instance ids, profile, memory, UUID and device files. Nothing on the GPUs is changed.

With --json the output is the fixture format that --fixture reads back.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return shows(a, inventory.Inventory.Table)(src.Load())
		},
	}
	inventoryFlags(cmd, &src)
	return cmd
}

func gresGenerateCmd(a *App) *cobra.Command {
	var r app.GresRequest
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Render this node's gres.conf and slurm.conf lines from its NVML inventory",
		Long: `Render the node's gres.conf, its slurm.conf Gres= string, the typed AccountingStorageTRES
entries, per-type TRESBillingWeights and the GPU types tenant quotas use, all from one NVML
inventory. A type name slurmd's NVML autodetect would not match is refused.

Output: without --write, the gres.conf lines on stdout (--slurm-conf: the slurm.conf lines
instead). With --write PATH, gres.conf is written to PATH atomically (temporary file, fsync,
rename; on any error the previous file stays as it was) and the slurm.conf lines go to stdout.

--check compares the inventory with the node's GRES as slurmctld reports it (through
slurmrestd) and exits non-zero when they differ.

--device-map gpu=PREFIX,mig=PREFIX writes File=PREFIX<n> instead of the real device files
(whole GPUs and MIG devices numbered from 0 in order), for test clusters with fake devices.`,
		Example: `  gpubridge gres generate --write /etc/slurm/gres.conf
  gpubridge gres generate --autodetect
  gpubridge gres generate --check
  gpubridge gres generate --fixture test/fixtures/gres/testbed-gpu-b.json --node gpu-b \
      --device-map mig=/dev/fakemig --cores 0=0-3,1=4-7`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			nodes := func(ctx context.Context) ([]slurmrest.Node, error) { return listSlurmNodes(ctx, a) }
			return saysPartly(a, app.GeneratedGres.Text)(a.GenerateGres(cmd.Context(), r, nodes))
		},
	}
	inventoryFlags(cmd, &r.Source)
	f := cmd.Flags()
	f.StringVar(&r.Node, "node", "", "Slurm NodeName of this node (default: the short host name in the inventory)")
	f.BoolVar(&r.AutoDetect, "autodetect", false, "render the AutoDetect=nvml variant (slurmd finds the devices itself)")
	f.StringVar(&r.DeviceMap, "device-map", "", "replace device files: gpu=PREFIX,mig=PREFIX gives File=PREFIX0, PREFIX1, ...")
	f.StringToStringVar(&r.Types, "type", nil, "rename a GRES type: DEFAULT_OR_PROFILE=TYPE (e.g. h100=h100_80gb); checked like the defaults")
	f.StringToStringVar(&r.Weights, "gpu-weight", nil, "billing weight of one whole GPU per type: TYPE=WEIGHT (default 1); MIG slices weigh slices/7 of it")
	f.StringToStringVar(&r.Cores, "cores", nil, "Slurm core ids per GPU index for Cores=: GPU=LIST (e.g. 0=0-3,1=4-7)")
	f.BoolVar(&r.SkipLost, "skip-lost", false, "render without GPUs NVML lost instead of refusing")
	f.StringVar(&r.Write, "write", "", "write gres.conf to this path atomically and print the slurm.conf lines")
	f.BoolVar(&r.SlurmConf, "slurm-conf", false, "print the slurm.conf lines instead of gres.conf")
	f.BoolVar(&r.Check, "check", false, "compare with the node's GRES in Slurm (slurmrestd); exit non-zero when they differ")
	return cmd
}

func gresPlanCmd(a *App) *cobra.Command {
	var r app.PlanRequest
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Plan MIG layouts for the slices wanted; print an nvidia-mig-parted config",
		Long: `Lay out the MIG slices wanted (per profile, across the GPUs) and print the result as an
nvidia-mig-parted config. Every layout follows NVIDIA's placement rules for the GPU model; a
demand that cannot fit is refused with the reason. A model's type (h100, a100, ...) asks for
whole GPUs with MIG disabled. gpubridge never changes MIG mode itself: apply the config with
nvidia-mig-parted.

The GPUs are --model and --gpus, or those of an inventory (--fixture, or NVML).`,
		Example: `  gpubridge gres plan --model H100-80GB --gpus 2 --want 1g.10gb=7,3g.40gb=2
  gpubridge gres plan --model H100-80GB --gpus 1 --want 3g.40gb=3     # refused: at most 2 fit
  gpubridge gres plan --fixture inv.json --want h100=4,1g.10gb=14,3g.40gb=4 > mig-parted.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return says(a, app.MIGPlan.Text)(a.PlanMIG(r))
		},
	}
	inventoryFlags(cmd, &r.Source)
	f := cmd.Flags()
	f.StringVar(&r.Model, "model", "", "GPU model to plan for: A100-40GB, A100-80GB, H100-80GB, H200-141GB, B200")
	f.IntVar(&r.Count, "gpus", 0, "number of GPUs of --model")
	f.StringSliceVar(&r.Want, "want", nil, "slices wanted: PROFILE=COUNT or TYPE=COUNT for whole GPUs, comma-separated (1g.10gb=7,3g.40gb=2)")
	f.StringVar(&r.Name, "name", "gpubridge", "name of the config in the mig-parted file (nvidia-mig-parted apply -c NAME)")
	return cmd
}
