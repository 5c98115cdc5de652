package view

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// BookingAudit says in one line what an audit row of a booking changed
// (show audit): before and after are the booking's JSON (nil: none).
func BookingAudit(before, after *string) string {
	var b, a reserve.Booking
	if before != nil {
		_ = json.Unmarshal([]byte(*before), &b)
	}
	if after != nil {
		_ = json.Unmarshal([]byte(*after), &a)
	}
	line := func(x reserve.Booking) string {
		s := fmt.Sprintf("%s %s %s..%s", x.Tenant, x.What(), utc.Format(x.Start), utc.Format(x.End))
		if x.Purpose != "" {
			s += fmt.Sprintf(" %q", x.Purpose)
		}
		return s
	}
	held := func(x reserve.Booking) string {
		if x.Held.IsZero() {
			return "no reservation"
		}
		return fmt.Sprintf("%s %d %s..%s", x.Held.Reservation, x.Held.Count, utc.Format(x.Held.Start), utc.Format(x.Held.End))
	}
	switch {
	case before == nil && after != nil:
		return line(a)
	case after == nil:
		return "removed"
	}
	var parts []string
	if l, m := line(b), line(a); l != m {
		parts = append(parts, l+" -> "+m)
	}
	if b.State != a.State {
		parts = append(parts, fmt.Sprintf("state %s -> %s", b.State, a.State))
	}
	if h, g := held(b), held(a); h != g {
		parts = append(parts, h+" -> "+g)
	}
	if a.Note != "" && a.Note != b.Note {
		parts = append(parts, "note: "+a.Note)
	}
	return strings.Join(parts, "; ")
}

// MaintenanceAudit says in one line what an audit row of a maintenance
// window changed.
func MaintenanceAudit(before, after *string) string {
	var m reserve.Maintenance
	s := after
	if s == nil {
		s = before
	}
	if s == nil || json.Unmarshal([]byte(*s), &m) != nil {
		return ""
	}
	line := fmt.Sprintf("%s %s..%s", strings.Join(m.Nodes, ","), utc.Format(m.Start), utc.Format(m.End))
	if m.Reason != "" {
		line += fmt.Sprintf(" %q", m.Reason)
	}
	if after == nil {
		return "removed " + line
	}
	return line
}
