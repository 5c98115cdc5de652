package view

import (
	"fmt"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/internal/table"
)

// Slots is find slot's table; --json prints the slots.
func Slots(slots []reserve.Slot, z Times) table.Table {
	if slots == nil {
		slots = []reserve.Slot{}
	}
	t := table.Table{Header: []string{"Start", "End", "LatestStart"}, Keys: []string{"start", "end", "latestStart"}, Raw: slots}
	for _, s := range slots {
		t.Rows = append(t.Rows, []string{z.Format(s.Start), z.Format(s.End), z.Format(s.Latest)})
	}
	return t
}

// NoSlot says that no window of q's shape fits (find slot found none).
func NoSlot(q reserve.SlotQuery) string {
	return fmt.Sprintf("No window of %d %s for %s fits before the booking horizon.\n", q.Count, q.Type, reserve.FormatDuration(q.Duration))
}
