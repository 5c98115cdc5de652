package export

import (
	"cmp"
	"slices"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

// Use is one booking's utilization in a summary: what it was charged for
// (booked GPU-seconds, its booking rows) and what jobs inside its
// reservation used (its tier-booked usage rows, priced at 0). Charged is
// false while the booking's charge is not written yet (it is written when
// the booking ends or the period closes, while use inside it is ingested
// as jobs run): its booked GPU-seconds are then unknown, not 0.
type Use struct {
	Tenant, Account, Type string
	HasTenant             bool
	Booking               int64
	Booked, Used          int64 // GPU-seconds
	Charged               bool
}

// Pending reports that the booking's charge is not written yet: its
// booked GPU-seconds, idle time and utilization are not known.
func (u Use) Pending() bool { return !u.Charged }

// Idle is the booked GPU-seconds no job used: booked − used, never
// negative (0 while the charge is pending, or when a correction leaves
// less booked than used in the period).
func (u Use) Idle() int64 {
	if u.Pending() || u.Used >= u.Booked {
		return 0
	}
	return u.Booked - u.Used
}

// Percent is the used share of the booked GPU-seconds, in hundredths of a
// percent (0 when nothing is booked).
func (u Use) Percent() int64 {
	if u.Booked <= 0 {
		return 0
	}
	return (u.Used*10000 + u.Booked/2) / u.Booked
}

// Utilization returns each booking's use in s, by tenant, account and
// booking.
func (s Summary) Utilization() []Use {
	by := map[int64]*Use{}
	for _, r := range s.Rows {
		if r.Booking == 0 {
			continue
		}
		u, ok := by[r.Booking]
		if !ok {
			u = &Use{Tenant: r.Tenant, Account: r.Account, Type: r.Type, HasTenant: r.HasTenant, Booking: r.Booking}
			by[r.Booking] = u
		}
		if r.Kind == meter.KindBooking {
			u.Booked += r.GPUSeconds
			u.Charged = true
		} else {
			u.Used += r.GPUSeconds
		}
	}
	out := make([]Use, 0, len(by))
	for _, u := range by {
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b Use) int {
		return cmp.Or(cmp.Compare(a.Tenant, b.Tenant), cmp.Compare(a.Account, b.Account), cmp.Compare(a.Booking, b.Booking))
	})
	return out
}

// CommitmentID is the FOCUS CommitmentDiscountId of a booking.
func CommitmentID(cluster string, booking int64) string { return cluster + "/booking/" + i64(booking) }

// bookingCharge maps a row of a booking (its charge, or use inside it) to
// FOCUS: the charge is a Purchase (One-Time) of the commitment, the use
// inside it Usage at the Committed price (0) with the commitment Used.
func bookingCharge(cluster string, kind meter.Kind, tier meter.Tier, booking, gpuSeconds int64) charge {
	if booking == 0 || (kind != meter.KindBooking && tier != meter.Booked) {
		return charge{}
	}
	cd := commitment{id: CommitmentID(cluster, booking), name: "booking " + i64(booking), category: "Usage", typ: "GPU booking",
		quantity: GPUHours(gpuSeconds), unit: unitGPUHours}
	if kind == meter.KindBooking {
		return charge{category: "Purchase", frequency: "One-Time", commitment: cd}
	}
	cd.status = "Used"
	return charge{pricing: "Committed", commitment: cd}
}
