package meter

import (
	"fmt"
	"time"
)

// BookedWindow is a booking as its charge needs it (bridge/reserve's booking,
// reduced to what is charged).
type BookedWindow struct {
	ID      int64
	Account string // the tenant's Slurm account (its name)
	Type    string // GPU type or MIG profile
	Count   int64  // GPUs booked
	// Start and End bound the booked window [Start, End), Unix seconds.
	Start, End int64
	// CancelledAt is when the booking was cancelled (Unix seconds); 0 when
	// it was not.
	CancelledAt int64
}

// Cancellation is the cancellation policy (config bookings.cancellation).
type Cancellation struct {
	// FreeBefore is the notice that makes a cancellation free: a booking
	// cancelled at least FreeBefore before its start costs nothing. One
	// cancelled later pays for the notice it did not give: its window is
	// charged from its start to FreeBefore after the cancellation (at most
	// to its end). With FreeBefore 0 a booking cancelled before its start
	// is free and one cancelled after its start pays up to the cancel time.
	FreeBefore time.Duration
}

// ChargedEnd returns the end of the part of b's window that is charged:
// End for a booking that was not cancelled; for a cancelled one, the
// cancel time plus the policy's notice, clamped to [Start, End] (Start:
// nothing is charged). A later cancellation never costs less than an
// earlier one.
func (c Cancellation) ChargedEnd(b BookedWindow) int64 {
	if b.CancelledAt == 0 {
		return b.End
	}
	e := b.CancelledAt + int64(c.FreeBefore/time.Second)
	return min(b.End, max(b.Start, e))
}

// BookingCharges returns the charge of b per period, in period order: one
// Usage of tier Booked per calendar month (UTC) that the charged part of
// its window [Start, ChargedEnd) touches, GPUSeconds = Count × the seconds
// of that part in the month. A booking of zero length, of no GPUs, or
// cancelled in time, returns nil. Usage.Run is {Cluster: cluster}; the
// booking's id is in Usage.Booking.
func BookingCharges(cluster string, b BookedWindow, c Cancellation) ([]Usage, error) {
	if b.ID <= 0 {
		return nil, fmt.Errorf("booking id %d: want a positive id", b.ID)
	}
	if b.Count < 0 || b.End < b.Start {
		return nil, fmt.Errorf("booking %d: count %d over [%d, %d) cannot be charged", b.ID, b.Count, b.Start, b.End)
	}
	end := c.ChargedEnd(b)
	if b.Count == 0 || end <= b.Start {
		return nil, nil
	}
	var out []Usage
	for p := PeriodOfUnix(b.Start); p.StartUnix() < end; p++ {
		s, e := max(b.Start, p.StartUnix()), min(end, p.EndUnix())
		if e <= s {
			continue
		}
		out = append(out, Usage{Run: RunKey{Cluster: cluster}, Period: p, Tier: Booked, Type: b.Type, Count: b.Count,
			Start: s, End: e, GPUSeconds: b.Count * (e - s), Final: true, Booking: b.ID})
	}
	return out, nil
}

// BookingKey is the ledger's idempotency key of a booking charge, without
// the revision: one booking's charge in one usage period for one type.
type BookingKey struct {
	Booking int64
	Period  Period
	Type    string
}

// BookingKeyOf returns the key of a charge line.
func BookingKeyOf(u Usage) BookingKey { return BookingKey{u.Booking, u.Period, u.Type} }

// BookingCharge is what the charge job hands the ledger for one booking:
// its charges as computed now (empty: nothing is charged, e.g. cancelled
// in time), which replace whatever the ledger holds for the booking by
// correction lines.
type BookingCharge struct {
	Booked  BookedWindow
	Charges []Usage
}
