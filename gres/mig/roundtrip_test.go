package mig_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/gres/conf"
	"github.com/gpubridge/gpubridge/gres/inventory"
	"github.com/gpubridge/gpubridge/gres/mig"
)

// products are NVML product names and memory sizes of the models.
var products = map[string]struct {
	name string
	mib  uint64
}{
	"A100-40GB": {"NVIDIA A100-SXM4-40GB", 40960},
	"A100-80GB": {"NVIDIA A100-SXM4-80GB", 81920},
	"H100-80GB": {"NVIDIA H100 80GB HBM3", 81559},
}

// inventoryOf builds the inventory a node would report once mig-parted
// applied the plan, with the instances where the plan put them.
func inventoryOf(t *testing.T, p mig.Plan) inventory.Inventory {
	t.Helper()
	inv := inventory.Inventory{Version: inventory.CurrentVersion, Host: "n1"}
	capMinor := 3
	for _, g := range p.GPUs {
		m, err := mig.ModelNamed(g.Model)
		if err != nil {
			t.Fatal(err)
		}
		pr := products[g.Model]
		gpu := inventory.GPU{Index: g.Index, Minor: g.Index, UUID: fmt.Sprintf("GPU-%d", g.Index), Name: pr.name,
			MemoryMiB: pr.mib, MIGCurrent: inventory.MIGDisabled, MIGPending: inventory.MIGDisabled}
		if g.MIGEnabled() {
			gpu.MIGCurrent, gpu.MIGPending = inventory.MIGEnabled, inventory.MIGEnabled
		}
		for j, s := range g.Layout {
			prof, _ := m.Profile(s.Profile)
			gpu.MIGDevices = append(gpu.MIGDevices, inventory.MIGDevice{
				Index: j, UUID: fmt.Sprintf("MIG-%d-%d", g.Index, j), Profile: s.Profile,
				GPUInstanceID: j + 1, GPUInstanceSlices: prof.ComputeSlices, ComputeInstanceSlices: prof.ComputeSlices,
				MemoryMiB: uint64(prof.MemoryGB) * 1024,
				Placement: inventory.Placement{Start: s.Start, Size: prof.MemorySlices},
				Files: []string{gpu.DeviceFile(), fmt.Sprintf("/dev/nvidia-caps/nvidia-cap%d", capMinor),
					fmt.Sprintf("/dev/nvidia-caps/nvidia-cap%d", capMinor+1)},
			})
			capMinor += 2
		}
		inv.GPUs = append(inv.GPUs, gpu)
	}
	if err := inv.Validate(); err != nil {
		t.Fatal(err)
	}
	return inv
}

// Every valid single-GPU layout of the A100s and the H100 survives the
// round trip: plan it, validate it, write it as a mig-parted config, and
// render the Slurm configuration of the node it produces, whose GRES
// counts are the demand ("+me" counts as its base profile, as slurmd names
// it).
func TestEveryLayoutRoundTrips(t *testing.T) {
	for _, model := range []string{"A100-40GB", "A100-80GB", "H100-80GB"} {
		m, _ := mig.ModelNamed(model)
		configs := m.Configs()
		if len(configs) < 100 {
			t.Fatalf("%s: only %d layouts", model, len(configs))
		}
		for _, c := range configs {
			want := mig.Demand(c)
			p, err := mig.PlanFor([]mig.GPU{{Index: 0, Model: m}}, want)
			if err != nil {
				t.Fatalf("%s %v: %v", model, c, err)
			}
			for _, g := range p.GPUs {
				if err := m.Validate(g.Layout); err != nil {
					t.Fatalf("%s %v: planned layout %s invalid: %v", model, c, g.Layout, err)
				}
			}
			cfg, err := mig.MigPartedConfig("gpubridge", p)
			if err != nil {
				t.Fatalf("%s %v: mig-parted config: %v", model, c, err)
			}
			for name, n := range c {
				if !strings.Contains(cfg, fmt.Sprintf("%q: %d", name, n)) {
					t.Fatalf("%s %v: mig-parted config lacks %s: %d:\n%s", model, c, name, n, cfg)
				}
			}
			res, err := conf.Render(inventoryOf(t, p), conf.Options{Node: "n1"})
			if err != nil {
				t.Fatalf("%s %v: render: %v", model, c, err)
			}
			wantGres := conf.NodeGres{}
			for name, n := range c {
				base, _, _ := strings.Cut(name, "+")
				wantGres[base] += n
			}
			if diff := cmp.Diff(wantGres, res.NodeGres()); diff != "" {
				t.Fatalf("%s %v: rendered GRES (-want +got):\n%s", model, c, diff)
			}
			parsed, err := conf.ParseNodeGres(res.Gres)
			if err != nil || cmp.Diff(wantGres, parsed) != "" {
				t.Fatalf("%s %v: Gres=%s parses to %v, %v", model, c, res.Gres, parsed, err)
			}
		}
	}
}
