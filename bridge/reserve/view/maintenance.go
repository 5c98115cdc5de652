package view

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/internal/table"
)

// Maintenance is show maintenance's table; --json prints the records.
func Maintenance(ms []reserve.Maintenance, z Times) table.Table {
	if ms == nil {
		ms = []reserve.Maintenance{}
	}
	t := table.Table{Header: []string{"ID", "Nodes", "Start", "End", "Reason", "CreatedBy"}, Raw: ms}
	for _, m := range ms {
		t.Rows = append(t.Rows, []string{strconv.FormatInt(m.ID, 10), strings.Join(m.Nodes, ","), z.Format(m.Start), z.Format(m.End), m.Reason, m.CreatedBy})
	}
	return t
}

// MaintenancePrompt is the confirmation of a maintenance window about to
// be added.
func MaintenancePrompt(m reserve.Maintenance, z Times) string {
	return fmt.Sprintf(" Adding maintenance\n  Nodes  = %s\n  Start  = %s\n  End    = %s\n  Reason = %s", strings.Join(m.Nodes, ","), z.Format(m.Start), z.Format(m.End), m.Reason)
}

// MaintenanceAdded says that window m was added and which bookings no
// longer fit (hit).
func MaintenanceAdded(m reserve.Maintenance, hit []reserve.Booking, z Times) string {
	var s strings.Builder
	fmt.Fprintf(&s, "Maintenance %d added: %s from %s to %s.\n", m.ID, strings.Join(m.Nodes, ","), z.Format(m.Start), z.Format(m.End))
	for _, b := range hit {
		fmt.Fprintf(&s, "  no longer fits: %s\n", b.Summary())
	}
	return s.String()
}

// MaintenanceDeletePrompt is the confirmation of removing window id.
func MaintenanceDeletePrompt(id int64) string {
	return fmt.Sprintf(" Deleting maintenance %d", id)
}

// MaintenanceDeleted says that window m was removed.
func MaintenanceDeleted(m reserve.Maintenance) string {
	return fmt.Sprintf("Maintenance %d (%s) deleted.\n", m.ID, strings.Join(m.Nodes, ","))
}
