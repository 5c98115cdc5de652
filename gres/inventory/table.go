package inventory

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpubridge/gpubridge/internal/table"
)

// Table lays out the inventory as `gres inventory` prints it: one row per
// GPU and one per MIG device; a GPU NVML lost shows why. Its --json is the
// inventory itself (Encode's fixture format, which --fixture reads back).
func (inv Inventory) Table() table.Table {
	t := table.Table{
		Header: []string{"GPU", "Minor", "Name", "MIG", "Device", "Profile", "MemoryMiB", "UUID", "Files"},
		Kinds:  []table.Kind{table.Number, table.Number, table.String, table.String, table.String, table.String, table.Number, table.String, table.String},
		Rows:   [][]string{},
		Raw:    inv,
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
