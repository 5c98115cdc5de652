package app

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/view"
	"github.com/gpubridge/gpubridge/internal/table"
)

// What the booking use cases return: each result prints itself (Text or
// Table, through bridge/reserve/view, in the times of the command), and
// one that is a record (a booking, a projection's report) is that record
// with --json.

// AddedBooking is the booking add booking admitted, the settings it was
// admitted under and when.
type AddedBooking struct {
	Booking  reserve.Booking
	Settings reserve.Settings
	Times    view.Times
	At       time.Time
}

// Text says that the booking was added and when its reservation is made.
func (r AddedBooking) Text() string { return view.Added(r.Booking, r.Settings, r.Times, r.At) }

// MarshalJSON writes the booking's record.
func (r AddedBooking) MarshalJSON() ([]byte, error) { return json.Marshal(r.Booking) }

// ModifiedBooking is booking ID before and after modify booking.
type ModifiedBooking struct {
	ID            int64
	Before, After reserve.Booking
	Times         view.Times
}

// Text says what the modification changed.
func (r ModifiedBooking) Text() string { return view.Modified(r.ID, r.Before, r.After, r.Times) }

// MarshalJSON writes the booking's record as it is now.
func (r ModifiedBooking) MarshalJSON() ([]byte, error) { return json.Marshal(r.After) }

// CancelledBookings are the bookings delete booking cancelled and the
// settings that name their reservations.
type CancelledBookings struct {
	IDs      []int64
	Settings reserve.Settings
}

// Text says, a line each, that the bookings were cancelled.
func (r CancelledBookings) Text() string {
	var s strings.Builder
	for _, id := range r.IDs {
		s.WriteString(view.Cancelled(id, r.Settings))
	}
	return s.String()
}

// BookingList is what show bookings lists.
type BookingList struct {
	Bookings []reserve.Booking
	Times    view.Times
}

// Table is show bookings' table (its --json: the records).
func (r BookingList) Table() table.Table { return view.Bookings(r.Bookings, r.Times) }

// BookingAvailability is what show availability shows.
type BookingAvailability struct {
	Availability reserve.Availability
	Times        view.Times
}

// Printout is what show availability prints for the output options o:
// the table (its -P form with o.Parsable; with --json the availability
// itself, every step) and, for people, the notes under it.
func (r BookingAvailability) Printout(o table.Options) Printout {
	t := view.Availability(r.Availability, r.Times, o.Parsable)
	t.Raw = r.Availability
	p := Printout{}.Table(t)
	if o.Parsable || o.JSON {
		return p
	}
	return p.Text(view.AvailabilityNotes(r.Availability, r.Times))
}

// FoundSlots are the windows find slot found for Query.
type FoundSlots struct {
	Query reserve.SlotQuery
	Slots []reserve.Slot
	Times view.Times
}

// Table is find slot's table (its --json: the slots).
func (r FoundSlots) Table() table.Table { return view.Slots(r.Slots, r.Times) }

// Text says that no window of the query's shape fits.
func (r FoundSlots) Text() string { return view.NoSlot(r.Query) }

// AddedMaintenance is the window add maintenance recorded and the
// bookings that no longer fit (Hit).
type AddedMaintenance struct {
	Maintenance reserve.Maintenance
	Hit         []reserve.Booking
	Times       view.Times
}

// Text says that the window was added and which bookings no longer fit.
func (r AddedMaintenance) Text() string { return view.MaintenanceAdded(r.Maintenance, r.Hit, r.Times) }

// MaintenanceList is what show maintenance lists.
type MaintenanceList struct {
	Windows []reserve.Maintenance
	Times   view.Times
}

// Table is show maintenance's table (its --json: the records).
func (r MaintenanceList) Table() table.Table { return view.Maintenance(r.Windows, r.Times) }

// Projected is what one projection (gpubridge project) did, and the
// slurmrestd requests of the run.
type Projected struct {
	Report   reserve.Report
	DryRun   bool
	Requests view.Requests
}

// Text is the projection's report (view.ProjectReport).
func (r Projected) Text() string { return view.ProjectReport(r.Report, r.DryRun, r.Requests) }

// MarshalJSON writes the report.
func (r Projected) MarshalJSON() ([]byte, error) { return json.Marshal(r.Report) }
