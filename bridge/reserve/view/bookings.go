package view

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/internal/table"
)

// bookingColumns are show bookings' columns: key, title, value.
var bookingColumns = []struct {
	key, title string
	value      func(b reserve.Booking, z Times) string
}{
	{"id", "ID", func(b reserve.Booking, _ Times) string { return strconv.FormatInt(b.ID, 10) }},
	{"tenant", "Tenant", func(b reserve.Booking, _ Times) string { return b.Tenant }},
	{"gpus", "GPUs", func(b reserve.Booking, _ Times) string { return b.What() }},
	{"start", "Start", func(b reserve.Booking, z Times) string { return z.Format(b.Start) }},
	{"end", "End", func(b reserve.Booking, z Times) string { return z.Format(b.End) }},
	{"duration", "Duration", func(b reserve.Booking, _ Times) string { return reserve.FormatDuration(b.Duration()) }},
	{"state", "State", func(b reserve.Booking, _ Times) string { return string(b.State) }},
	{"reservation", "Reservation", func(b reserve.Booking, _ Times) string { return b.Held.Reservation }},
	{"held", "Held", func(b reserve.Booking, _ Times) string {
		if b.Held.IsZero() {
			return ""
		}
		return strconv.Itoa(b.Held.Count) + "@" + strings.Join(b.Held.Nodes, ",")
	}},
	{"purpose", "Purpose", func(b reserve.Booking, _ Times) string { return b.Purpose }},
	{"note", "Note", func(b reserve.Booking, _ Times) string { return b.Note }},
	{"createdby", "CreatedBy", func(b reserve.Booking, _ Times) string { return b.CreatedBy }},
	{"createdat", "CreatedAt", func(b reserve.Booking, z Times) string { return z.Format(b.CreatedAt.Truncate(time.Second)) }},
}

// BookingColumns are the keys of show bookings' columns, in order.
func BookingColumns() []string {
	var ks []string
	for _, c := range bookingColumns {
		ks = append(ks, c.key)
	}
	return ks
}

// DefaultBookingColumns are the columns show bookings prints without
// format=.
var DefaultBookingColumns = []string{"id", "tenant", "gpus", "start", "end", "state", "reservation", "purpose", "note"}

// Bookings is show bookings' table: every column (format= picks), the
// records for --json.
func Bookings(bs []reserve.Booking, z Times) table.Table {
	if bs == nil {
		bs = []reserve.Booking{}
	}
	t := table.Table{Raw: bs}
	for _, c := range bookingColumns {
		t.Header, t.Keys = append(t.Header, c.title), append(t.Keys, c.key)
	}
	for _, b := range bs {
		row := make([]string, 0, len(bookingColumns))
		for _, c := range bookingColumns {
			row = append(row, c.value(b, z))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// Describe is the confirmation of a booking about to be added.
func Describe(title string, b reserve.Booking, z Times) string {
	var s strings.Builder
	fmt.Fprintf(&s, "%s\n  Tenant   = %s\n  GPUs     = %s\n  Start    = %s\n  End      = %s\n  Duration = %s\n",
		title, b.Tenant, b.What(), z.Format(b.Start), z.Format(b.End), reserve.FormatDuration(b.Duration()))
	if b.Purpose != "" {
		fmt.Fprintf(&s, "  Purpose  = %s\n", b.Purpose)
	}
	return s.String()
}

// Added says that booking b was added and when its reservation is made.
func Added(b reserve.Booking, set reserve.Settings, z Times, now time.Time) string {
	state := b.StateAt(now)
	when := fmt.Sprintf("is made %s before the start by the daemon's bookings job (or `gpubridge project`)", reserve.FormatDuration(set.LeadTime))
	if b.Start.Sub(now) <= set.LeadTime {
		when = "is made by the next projection (the daemon's bookings job, or `gpubridge project` now)"
		if state == reserve.StateAtRisk {
			when += "; until then the booking shows at-risk, since Slurm holds nothing for it yet"
		}
	}
	return fmt.Sprintf("Booking %d added: %s for %s from %s to %s (%s). Its Slurm reservation %s %s.\n",
		b.ID, b.What(), b.Tenant, z.Format(b.Start), z.Format(b.End), state, set.ReservationName(b.ID), when)
}

// ModifyPrompt is the confirmation of the changes set (key=value, after
// `set`) to booking cur.
func ModifyPrompt(cur reserve.Booking, set map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, " Modifying booking %d (%s, %s)\n", cur.ID, cur.Tenant, cur.What())
	for _, k := range reserve.ModifyKeys {
		if v, ok := set[k]; ok {
			fmt.Fprintf(&b, "  %-8s -> %s\n", k, v)
		}
	}
	return b.String()
}

// PerNodePrompt is the confirmation of recording a node booking's GPUs
// per node (modify booking ID set pernode=...), with the class's figure
// in the pool now.
func PerNodePrompt(cur reserve.Booking, per map[string]int, now string) string {
	return fmt.Sprintf(" Recording the GPUs per node of booking %d (%s, %s, %s to %s)\n  pernode  -> %s (its class has %s per node in the pool now)\n  its charge and node health credits will count %d node(s) x that\n",
		cur.ID, cur.Tenant, cur.What(), cur.Start.UTC().Format(time.RFC3339), cur.End.UTC().Format(time.RFC3339), reserve.FormatPerNode(per), now, cur.Count)
}

// Modified says what a modification of booking id changed.
func Modified(id int64, before, after reserve.Booking, z Times) string {
	if before.PerNode == nil && after.PerNode != nil {
		return fmt.Sprintf("Booking %d (%s): recorded %s GPUs per node. `gpubridge charge bookings` charges it now.\n", id, after.What(), reserve.FormatPerNode(after.PerNode))
	}
	if before.Start.Equal(after.Start) && before.End.Equal(after.End) && before.Count == after.Count && before.Purpose == after.Purpose {
		return fmt.Sprintf("Booking %d: nothing to change.\n", id)
	}
	return fmt.Sprintf("Booking %d modified: %s from %s to %s (was %s from %s to %s). `gpubridge project` makes the change in Slurm.\n", id,
		after.What(), z.Format(after.Start), z.Format(after.End),
		before.What(), z.Format(before.Start), z.Format(before.End))
}

// CancelPrompt is the confirmation of cancelling bookings.
func CancelPrompt(bs []reserve.Booking) string {
	lines := make([]string, 0, len(bs))
	for _, b := range bs {
		lines = append(lines, b.Summary())
	}
	return " Cancelling booking(s)\n  " + strings.Join(lines, "\n  ")
}

// Cancelled says that booking id was cancelled.
func Cancelled(id int64, set reserve.Settings) string {
	return fmt.Sprintf("Booking %d cancelled. `gpubridge project` deletes its Slurm reservation %s (it waits while jobs run inside).\n", id, set.ReservationName(id))
}
