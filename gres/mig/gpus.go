package mig

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpubridge/gpubridge/gres/inventory"
)

// MaxGPUs bounds the GPUs one plan lays out: the most one inventory may
// hold, more than a node has (eight today) and few enough that a plan
// stays quick and readable.
const MaxGPUs = inventory.MaxGPUs

// ModelGPUs returns n GPUs of the named model (ModelNamed: a catalog name
// in any case), indexed from 0, for planning without an inventory. n must be
// 1 to MaxGPUs.
func ModelGPUs(model string, n int) ([]GPU, error) {
	if n < 1 || n > MaxGPUs {
		return nil, fmt.Errorf("plan for 1 to %d GPUs, not %d", MaxGPUs, n)
	}
	m, err := ModelNamed(model)
	if err != nil {
		return nil, err
	}
	out := make([]GPU, n)
	for i := range out {
		out[i] = GPU{Index: i, Model: m}
	}
	return out, nil
}

// Skipped is a GPU of an inventory the planner leaves out, and why.
type Skipped struct {
	Index  int
	Name   string // NVML's product name; "" for a GPU NVML lost
	Reason string // "NVML lost it", "no MIG catalog for its model"
}

// InventoryGPUs returns the GPUs of inv the planner can lay out, in index
// order, and the ones it leaves out: GPUs NVML lost and GPUs of a model
// without a catalog here. It is an error when none is left, or when the
// inventory has more than MaxGPUs GPUs.
func InventoryGPUs(inv inventory.Inventory) ([]GPU, []Skipped, error) {
	if len(inv.GPUs) > MaxGPUs {
		return nil, nil, fmt.Errorf("the inventory has %d GPUs; a plan lays out at most %d", len(inv.GPUs), MaxGPUs)
	}
	var out []GPU
	var skipped []Skipped
	for _, g := range inv.Sorted().GPUs {
		if g.Lost != "" {
			skipped = append(skipped, Skipped{Index: g.Index, Reason: "NVML lost it"})
			continue
		}
		m, ok := Identify(g.Name, g.MemoryMiB, g.PCIDeviceID)
		if !ok {
			skipped = append(skipped, Skipped{Index: g.Index, Name: g.Name, Reason: "no MIG catalog for its model"})
			continue
		}
		out = append(out, GPU{Index: g.Index, Model: m})
	}
	if len(out) == 0 {
		return nil, skipped, errors.New("the inventory has no MIG-capable GPU of a known model (" + strings.Join(modelNames(), ", ") + ")")
	}
	return out, skipped, nil
}

func modelNames() []string {
	var names []string
	for _, m := range Models() {
		names = append(names, m.Name)
	}
	return names
}
