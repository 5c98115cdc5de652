package mig

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/gres/inventory"
)

func TestModelGPUs(t *testing.T) {
	cases := map[string]struct {
		model   string
		n       int
		wantErr string
	}{
		"two H100":       {model: "H100-80GB", n: 2},
		"any case":       {model: "h100-80gb", n: 1},
		"at the bound":   {model: "A100-40GB", n: MaxGPUs},
		"none":           {model: "H100-80GB", n: 0, wantErr: "plan for 1 to 64 GPUs, not"},
		"negative":       {model: "H100-80GB", n: -3, wantErr: "plan for 1 to 64 GPUs, not"},
		"over the bound": {model: "H100-80GB", n: MaxGPUs + 1, wantErr: "plan for 1 to 64 GPUs, not"},
		"a billion":      {model: "H100-80GB", n: 1_000_000_000, wantErr: "plan for 1 to 64 GPUs, not"},
		"unknown model":  {model: "V100", n: 1, wantErr: `unknown GPU model "V100"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ModelGPUs(tc.model, tc.n)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.n || got[0].Index != 0 || got[tc.n-1].Index != tc.n-1 || !strings.EqualFold(got[0].Model.Name, tc.model) {
				t.Errorf("got %d GPUs, first %+v", len(got), got[0])
			}
		})
	}
}

func TestInventoryGPUs(t *testing.T) {
	h100 := inventory.GPU{Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, PCIDeviceID: "0x233010DE", MIGCurrent: inventory.MIGDisabled}
	at := func(i int, g inventory.GPU) inventory.GPU { g.Index, g.Minor = i, i; return g }
	t.Run("lost and unknown GPUs left out", func(t *testing.T) {
		inv := inventory.Inventory{GPUs: []inventory.GPU{
			at(2, h100), {Index: 1, Lost: "ERROR_GPU_IS_LOST"}, at(0, inventory.GPU{Name: "Tesla V100-SXM2-32GB", MemoryMiB: 32768}),
		}}
		gpus, skipped, err := InventoryGPUs(inv)
		if err != nil {
			t.Fatal(err)
		}
		if len(gpus) != 1 || gpus[0].Index != 2 || gpus[0].Model.Name != "H100-80GB" {
			t.Errorf("gpus = %+v", gpus)
		}
		want := []Skipped{{Index: 0, Name: "Tesla V100-SXM2-32GB", Reason: "no MIG catalog for its model"}, {Index: 1, Reason: "NVML lost it"}}
		if d := cmp.Diff(want, skipped); d != "" {
			t.Errorf("skipped (-want +got)\n%s", d)
		}
	})
	t.Run("none left", func(t *testing.T) {
		_, _, err := InventoryGPUs(inventory.Inventory{GPUs: []inventory.GPU{{Index: 0, Lost: "x"}}})
		if err == nil || !strings.Contains(err.Error(), "no MIG-capable GPU of a known model (A100-40GB, A100-80GB, H100-80GB, H200-141GB, B200)") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("more than MaxGPUs", func(t *testing.T) {
		var inv inventory.Inventory
		for i := 0; i <= MaxGPUs; i++ {
			inv.GPUs = append(inv.GPUs, at(i, h100))
		}
		if _, _, err := InventoryGPUs(inv); err == nil || !strings.Contains(err.Error(), "at most 64") {
			t.Errorf("error %v", err)
		}
	})
}
