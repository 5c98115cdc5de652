package meter

import "fmt"

// Tier is how a run is billed: inside the tenant's reservation-backed quota,
// or as on-demand (burst) use.
type Tier string

const (
	// Reserved is use inside a tenant's own quota (pool partition, tenant QOS).
	Reserved Tier = "reserved"
	// OnDemand is use in the on-demand partition or under the on-demand QOS.
	OnDemand Tier = "ondemand"
	// Booked is booked capacity: a booking's charge (its GPUs × its window,
	// at the rate card's booked rate) and the use of jobs that ran inside
	// the booking's Slurm reservation (priced at 0: the booking paid for
	// those GPU-seconds already).
	Booked Tier = "booked"
)

// Tiers lists the tiers of use outside bookings, in their report order
// (a rate without a tier applies to these).
var Tiers = []Tier{Reserved, OnDemand}

// AllTiers lists every tier, bookings' included.
var AllTiers = []Tier{Reserved, OnDemand, Booked}

// ParseTier accepts "reserved", "ondemand" or "booked".
func ParseTier(s string) (Tier, error) {
	switch Tier(s) {
	case Reserved, OnDemand, Booked:
		return Tier(s), nil
	}
	return "", fmt.Errorf("tier %q: want reserved, ondemand or booked", s)
}

// TierRules maps where a run ran to its tier. It comes from the config's
// tenants.onDemandPartition and tenants.onDemandQOS.
type TierRules struct {
	OnDemandPartition string
	OnDemandQOS       string
	// BookingPrefix names gpubridge's booking reservations (config
	// bookings.reservationPrefix, "gpubridge-"): a run inside reservation
	// BookingPrefix + <id> is tier Booked, of booking <id>. Empty: no run
	// is.
	BookingPrefix string
}

// Booking returns the booking whose reservation a run ran in: the id
// after BookingPrefix (a positive decimal, nothing else), or 0.
func (r TierRules) Booking(reservation string) int64 {
	if r.BookingPrefix == "" || len(reservation) <= len(r.BookingPrefix) || reservation[:len(r.BookingPrefix)] != r.BookingPrefix {
		return 0
	}
	var id int64
	for _, c := range reservation[len(r.BookingPrefix):] {
		if c < '0' || c > '9' || id > (1<<62)/10 {
			return 0
		}
		id = id*10 + int64(c-'0')
	}
	return id
}

// RunTier is the tier of a run and the booking it ran in: Booked (with
// the booking's id) when it ran inside a booking's reservation, else
// Tier(partition, qos) and 0. Inside a booking wins: the job ran on
// booked GPUs, whatever partition or QOS it named.
func (r TierRules) RunTier(run Run) (Tier, int64) {
	if id := r.Booking(run.Reservation); id > 0 {
		return Booked, id
	}
	return r.Tier(run.Partition, run.QOS), 0
}

// Tier is OnDemand when the run's partition is the on-demand partition or
// its QOS is the on-demand QOS (either is enough: the burst controller moves
// a job to both, and an admin may move it to only one), else Reserved.
// Empty rule fields never match.
func (r TierRules) Tier(partition, qos string) Tier {
	if (r.OnDemandPartition != "" && partition == r.OnDemandPartition) ||
		(r.OnDemandQOS != "" && qos == r.OnDemandQOS) {
		return OnDemand
	}
	return Reserved
}
