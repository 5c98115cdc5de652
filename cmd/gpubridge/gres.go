package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/slurmrest"
	"github.com/gpubridge/gpubridge/gres/conf"
	"github.com/gpubridge/gpubridge/gres/device"
	"github.com/gpubridge/gpubridge/gres/inventory"
	"github.com/gpubridge/gpubridge/gres/mig"
	"github.com/gpubridge/gpubridge/gres/slurmcheck"
	"github.com/gpubridge/gpubridge/internal/atomicfile"
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
var listSlurmNodes = func(ctx context.Context, a *App) ([]slurmrest.Node, error) {
	cl, err := a.Slurm(ctx)
	if err != nil {
		return nil, err
	}
	return cl.ListNodes(ctx)
}

type inventorySource struct {
	fixture string
	root    string
}

func (s *inventorySource) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&s.fixture, "fixture", "", "read a recorded inventory (the JSON of `gres inventory --json`) instead of NVML")
	f.StringVar(&s.root, "root", "", "directory that holds proc/driver/nvidia-caps/mig-minors (default /)")
}

func (s *inventorySource) load() (inventory.Inventory, error) {
	if s.fixture != "" {
		return inventory.ReadFile(s.fixture)
	}
	return collectInventory(device.Options{Root: s.root})
}

func gresInventoryCmd(a *App) *cobra.Command {
	var src inventorySource
	cmd := &cobra.Command{
		Use:   "inventory",
		Short: "Show the node's GPUs and MIG devices as NVML reports them (read-only)",
		Long: `Show the node's GPUs and MIG devices as NVML reports them: index, minor number, UUID,
product name, memory, MIG mode (current and pending), and per MIG device its GPU and compute
instance ids, profile, memory, UUID and device files. Nothing on the GPUs is changed.

With --json the output is the fixture format that --fixture reads back.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			inv, err := src.load()
			if err != nil {
				return err
			}
			if a.output.JSON {
				return inventory.Encode(a.out, inv)
			}
			return a.Print(inv.Table())
		},
	}
	src.flags(cmd)
	return cmd
}

func gresGenerateCmd(a *App) *cobra.Command {
	var (
		src        inventorySource
		node       string
		autodetect bool
		deviceMap  string
		types      map[string]string
		weights    map[string]string
		cores      map[string]string
		skipLost   bool
		write      string
		slurmConf  bool
		check      bool
	)
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
			dm, err := conf.ParseDeviceMap(deviceMap)
			if err != nil {
				return usageError{err}
			}
			o := conf.Options{AutoDetect: autodetect, DeviceMap: dm, Types: types, SkipLost: skipLost}
			if o.GPUWeights, err = conf.ParseWeights(weights); err != nil {
				return usageError{err}
			}
			if o.Cores, err = conf.ParseCores(cores); err != nil {
				return usageError{err}
			}
			if write != "" && slurmConf {
				return usagef("--slurm-conf and --write: with --write the slurm.conf lines are printed anyway")
			}
			inv, err := src.load()
			if err != nil {
				return err
			}
			if o.Node, err = conf.NodeName(inv, node); err != nil {
				return usageError{err}
			}
			res, err := conf.Render(inv, o)
			if err != nil {
				return err
			}
			for _, n := range res.Notes {
				a.Logger().Warn("gres generate", "node", o.Node, "note", n)
			}
			switch {
			case write != "":
				if _, err := atomicfile.Write(write, []byte(res.GresConf), atomicfile.Options{}); err != nil {
					return err
				}
				a.Logger().Info("gres.conf written", "path", write, "node", o.Node, "gres", res.Gres)
				if err := printRendered(a, res, res.SlurmConf); err != nil {
					return err
				}
			case check:
				// only the comparison below
			case slurmConf:
				if err := printRendered(a, res, res.SlurmConf); err != nil {
					return err
				}
			default:
				if err := printRendered(a, res, res.GresConf); err != nil {
					return err
				}
			}
			if !check {
				return nil
			}
			ok, err := slurmcheck.Check(cmd.Context(), slurmcheck.ListerFunc(func(ctx context.Context) ([]slurmrest.Node, error) {
				return listSlurmNodes(ctx, a)
			}), res)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(a.out, ok)
			return err
		},
	}
	src.flags(cmd)
	f := cmd.Flags()
	f.StringVar(&node, "node", "", "Slurm NodeName of this node (default: the short host name in the inventory)")
	f.BoolVar(&autodetect, "autodetect", false, "render the AutoDetect=nvml variant (slurmd finds the devices itself)")
	f.StringVar(&deviceMap, "device-map", "", "replace device files: gpu=PREFIX,mig=PREFIX gives File=PREFIX0, PREFIX1, ...")
	f.StringToStringVar(&types, "type", nil, "rename a GRES type: DEFAULT_OR_PROFILE=TYPE (e.g. h100=h100_80gb); checked like the defaults")
	f.StringToStringVar(&weights, "gpu-weight", nil, "billing weight of one whole GPU per type: TYPE=WEIGHT (default 1); MIG slices weigh slices/7 of it")
	f.StringToStringVar(&cores, "cores", nil, "Slurm core ids per GPU index for Cores=: GPU=LIST (e.g. 0=0-3,1=4-7)")
	f.BoolVar(&skipLost, "skip-lost", false, "render without GPUs NVML lost instead of refusing")
	f.StringVar(&write, "write", "", "write gres.conf to this path atomically and print the slurm.conf lines")
	f.BoolVar(&slurmConf, "slurm-conf", false, "print the slurm.conf lines instead of gres.conf")
	f.BoolVar(&check, "check", false, "compare with the node's GRES in Slurm (slurmrestd); exit non-zero when they differ")
	return cmd
}

func printRendered(a *App, res conf.Result, text string) error {
	if a.output.JSON {
		enc := json.NewEncoder(a.out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	_, err := fmt.Fprint(a.out, text)
	return err
}

func gresPlanCmd(a *App) *cobra.Command {
	var (
		src   inventorySource
		model string
		count int
		want  []string
		name  string
	)
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
			demand, err := mig.ParseDemand(want)
			if err != nil {
				return usageError{err}
			}
			gpus, err := planGPUs(a, &src, model, count)
			if err != nil {
				return err
			}
			plan, err := mig.PlanFor(gpus, demand)
			if err != nil {
				return err
			}
			if a.output.JSON {
				enc := json.NewEncoder(a.out)
				enc.SetIndent("", "  ")
				return enc.Encode(plan)
			}
			out, err := mig.MigPartedConfig(name, plan)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(a.out, out)
			return err
		},
	}
	src.flags(cmd)
	f := cmd.Flags()
	f.StringVar(&model, "model", "", "GPU model to plan for: A100-40GB, A100-80GB, H100-80GB, H200-141GB, B200")
	f.IntVar(&count, "gpus", 0, "number of GPUs of --model")
	f.StringSliceVar(&want, "want", nil, "slices wanted: PROFILE=COUNT or TYPE=COUNT for whole GPUs, comma-separated (1g.10gb=7,3g.40gb=2)")
	f.StringVar(&name, "name", "gpubridge", "name of the config in the mig-parted file (nvidia-mig-parted apply -c NAME)")
	return cmd
}

// planGPUs are the GPUs of --model and --gpus, or of the inventory.
func planGPUs(a *App, src *inventorySource, model string, count int) ([]mig.GPU, error) {
	if model != "" || count != 0 {
		if src.fixture != "" {
			return nil, usagef("give either --model and --gpus or --fixture, not both")
		}
		if model == "" || count <= 0 {
			return nil, usagef("--model and --gpus go together (e.g. --model H100-80GB --gpus 2)")
		}
		gpus, err := mig.ModelGPUs(model, count)
		if err != nil {
			return nil, usagef("--model %s --gpus %d: %v", model, count, err)
		}
		return gpus, nil
	}
	inv, err := src.load()
	if err != nil {
		return nil, err
	}
	gpus, skipped, err := mig.InventoryGPUs(inv)
	for _, s := range skipped {
		a.Logger().Warn("gres plan: GPU left out: "+s.Reason, "gpu", s.Index, "name", s.Name)
	}
	return gpus, err
}
