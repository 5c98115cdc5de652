package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/slurmrest"
	"github.com/gpubridge/gpubridge/gres/conf"
	"github.com/gpubridge/gpubridge/gres/device"
	"github.com/gpubridge/gpubridge/gres/inventory"
	"github.com/gpubridge/gpubridge/gres/mig"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
)

// registerGres adds the node-ops commands for GPUs and MIG: gres
// inventory, gres generate, gres plan.
func registerGres(a *App, root *cobra.Command) {
	g := &cobra.Command{
		Use:   "gres <inventory|generate|plan>",
		Short: "GPUs and MIG on a node: NVML inventory, gres.conf and slurm.conf lines, MIG layout plans",
		Args:  cobra.NoArgs,
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
			return a.Print(inventoryTable(inv))
		},
	}
	src.flags(cmd)
	return cmd
}

func inventoryTable(inv inventory.Inventory) table.Table {
	t := table.Table{
		Header: []string{"GPU", "Minor", "Name", "MIG", "Device", "Profile", "MemoryMiB", "UUID", "Files"},
	}
	for _, g := range inv.Sorted().GPUs {
		gpu := strconv.Itoa(g.Index)
		if g.Lost != "" {
			t.Rows = append(t.Rows, []string{gpu, "-", "LOST: " + g.Lost, "-", "-", "-", "-", "-", "-"})
			continue
		}
		mode := string(g.MIGCurrent)
		if g.MIGChangePending() {
			mode += "->" + string(g.MIGPending)
		}
		t.Rows = append(t.Rows, []string{gpu, strconv.Itoa(g.Minor), g.Name, mode, "gpu", "-",
			strconv.FormatUint(g.MemoryMiB, 10), g.UUID, g.DeviceFile()})
		for _, m := range g.MIGDevices {
			t.Rows = append(t.Rows, []string{gpu, strconv.Itoa(g.Minor), g.Name, mode,
				fmt.Sprintf("mig%d (gi%d/ci%d)", m.Index, m.GPUInstanceID, m.ComputeInstanceID), m.Profile,
				strconv.FormatUint(m.MemoryMiB, 10), m.UUID, strings.Join(m.Files, ",")})
		}
	}
	return t
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
			o := conf.Options{Node: node, AutoDetect: autodetect, DeviceMap: dm, Types: types, SkipLost: skipLost}
			if o.GPUWeights, err = parseWeights(weights); err != nil {
				return err
			}
			if o.Cores, err = parseCores(cores); err != nil {
				return err
			}
			if write != "" && slurmConf {
				return usagef("--slurm-conf and --write: with --write the slurm.conf lines are printed anyway")
			}
			inv, err := src.load()
			if err != nil {
				return err
			}
			if o.Node == "" {
				o.Node, _, _ = strings.Cut(inv.Host, ".")
				if o.Node == "" {
					return usagef("the inventory names no host: give the Slurm node name with --node")
				}
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
				if err := writeFileAtomic(write, []byte(res.GresConf)); err != nil {
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
			if check {
				return checkNodeGres(cmd.Context(), a, res)
			}
			return nil
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

// checkNodeGres compares the rendered GRES with what slurmctld reports
// for the node.
func checkNodeGres(ctx context.Context, a *App, res conf.Result) error {
	nodes, err := listSlurmNodes(ctx, a)
	if err != nil {
		return fmt.Errorf("gres check: %w", err)
	}
	var found *slurmrest.Node
	for i := range nodes {
		if nodes[i].Name == res.Node {
			found = &nodes[i]
		}
	}
	if found == nil {
		return fmt.Errorf("gres check: slurmctld has no node %q", res.Node)
	}
	got := conf.NodeGres{}
	for _, g := range found.GRES {
		if g.Name == "gpu" {
			got[g.Type] += int(g.Count)
		}
	}
	want := res.NodeGres()
	mm := conf.Compare(want, got)
	if len(mm) == 0 {
		fmt.Fprintf(a.out, "gres check %s: OK, Slurm and the inventory agree: %s\n", res.Node, res.Gres)
		return nil
	}
	lines := make([]string, len(mm))
	for i, m := range mm {
		lines[i] = "  " + m.String()
	}
	state := ""
	if found.Reason != "" {
		state = fmt.Sprintf(" (node state %s, reason %q)", strings.Join(found.State, "+"), found.Reason)
	}
	return fmt.Errorf("gres check %s: Slurm's GRES for the node differs from the inventory%s:\n%s\ninventory: %s\nSlurm:     %s",
		res.Node, state, strings.Join(lines, "\n"), res.Gres, got)
}

func parseWeights(m map[string]string) (map[string]float64, error) {
	out := map[string]float64{}
	for k, v := range m {
		w, err := strconv.ParseFloat(v, 64)
		if err != nil || w < 0 {
			return nil, usagef("--gpu-weight %s=%s: the weight must be a non-negative number", k, v)
		}
		out[k] = w
	}
	return out, nil
}

func parseCores(m map[string]string) (map[int]string, error) {
	out := map[int]string{}
	for k, v := range m {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 {
			return nil, usagef("--cores %s=%s: the key is a GPU index (0, 1, ...)", k, v)
		}
		out[i] = v
	}
	return out, nil
}

// writeFileAtomic replaces path with data so that a reader sees the old
// file or the new one, never a part: a temporary file in the same
// directory, fsync, rename, fsync of the directory. The file keeps the
// mode of the one it replaces (0644 when new). On an error path is as it
// was.
func writeFileAtomic(path string, data []byte) (err error) {
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			return fmt.Errorf("write %s: not a regular file", path)
		}
		mode = st.Mode().Perm()
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Chmod(mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: fsync: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		serr := d.Sync()
		d.Close()
		if serr != nil && !errors.Is(serr, os.ErrInvalid) {
			return fmt.Errorf("write %s: fsync directory: %w", path, serr)
		}
	}
	return nil
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
			demand, err := parseDemand(want)
			if err != nil {
				return err
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

func parseDemand(want []string) (mig.Demand, error) {
	d := mig.Demand{}
	for _, item := range want {
		for _, w := range kv.List(item) {
			k, v, ok := strings.Cut(w, "=")
			n, err := strconv.Atoi(v)
			if !ok || k == "" || err != nil || n < 0 {
				return nil, usagef("--want %q: expected PROFILE=COUNT, e.g. 1g.10gb=7", w)
			}
			if _, dup := d[k]; dup {
				return nil, usagef("--want: %s given twice", k)
			}
			d[k] = n
		}
	}
	if len(d) == 0 {
		return nil, usagef("say what to plan with --want PROFILE=COUNT,...")
	}
	return d, nil
}

func planGPUs(a *App, src *inventorySource, model string, count int) ([]mig.GPU, error) {
	if model != "" || count != 0 {
		if src.fixture != "" {
			return nil, usagef("give either --model and --gpus or --fixture, not both")
		}
		if model == "" || count <= 0 {
			return nil, usagef("--model and --gpus go together (e.g. --model H100-80GB --gpus 2)")
		}
		m, err := mig.ModelNamed(model)
		if err != nil {
			return nil, usageError{err}
		}
		out := make([]mig.GPU, count)
		for i := range out {
			out[i] = mig.GPU{Index: i, Model: m}
		}
		return out, nil
	}
	inv, err := src.load()
	if err != nil {
		return nil, err
	}
	var out []mig.GPU
	for _, g := range inv.Sorted().GPUs {
		if g.Lost != "" {
			a.Logger().Warn("gres plan: GPU left out: NVML lost it", "gpu", g.Index)
			continue
		}
		m, ok := mig.Identify(g.Name, g.MemoryMiB, g.PCIDeviceID)
		if !ok {
			a.Logger().Warn("gres plan: GPU left out: no MIG catalog for its model", "gpu", g.Index, "name", g.Name)
			continue
		}
		out = append(out, mig.GPU{Index: g.Index, Model: m})
	}
	if len(out) == 0 {
		return nil, errors.New("the inventory has no MIG-capable GPU of a known model (A100-40GB, A100-80GB, H100-80GB, H200-141GB, B200)")
	}
	return out, nil
}
