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
)

// Tiers lists the tiers in their report order.
var Tiers = []Tier{Reserved, OnDemand}

// ParseTier accepts "reserved" or "ondemand".
func ParseTier(s string) (Tier, error) {
	switch Tier(s) {
	case Reserved, OnDemand:
		return Tier(s), nil
	}
	return "", fmt.Errorf("tier %q: want reserved or ondemand", s)
}

// TierRules maps where a run ran to its tier. It comes from the config's
// tenants.onDemandPartition and tenants.onDemandQOS.
type TierRules struct {
	OnDemandPartition string
	OnDemandQOS       string
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
