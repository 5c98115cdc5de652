package api

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// Parts of a snapshot, each read on its own: a part whose read fails keeps
// its previous value and says so (Snapshot.Errors).
const (
	PartTenants   = "tenants"
	PartJobs      = "jobs"
	PartBurst     = "burst"
	PartInventory = "inventory"
	PartBookings  = "bookings"
	PartUsage     = "usage"
	PartIngest    = "ingest"
)

// Parts lists the parts.
var Parts = []string{PartTenants, PartJobs, PartBurst, PartInventory, PartBookings, PartUsage, PartIngest}

// Untyped names GPUs asked for without a type (--gres=gpu:2).
const Untyped = "untyped"

// TypeUse is one tenant's position on one GPU type now.
type TypeUse struct {
	Type string `json:"type"`
	// Quota is the tenant's limit (GrpTRES); nil when the type is not in
	// its quota (the guard refuses jobs asking for it).
	Quota *int64 `json:"quota"`
	// InQuota are GPUs running under the tenant's QOS: what counts
	// against the quota.
	InQuota int64 `json:"inQuota"`
	// Bursting are GPUs running in the on-demand tier.
	Bursting int64 `json:"bursting"`
	// Allocated are all GPUs the tenant's running jobs hold (in quota,
	// bursting, inside bookings).
	Allocated int64 `json:"allocated"`
	// Pending are GPUs the tenant's pending jobs ask for.
	Pending int64 `json:"pending"`
	// Booked are GPUs of the tenant's bookings in force now.
	Booked int64 `json:"booked"`
}

// PoolType is the pool's position on one GPU type now.
type PoolType struct {
	Type string `json:"type"`
	// Capacity is what slurmctld reports for the pool's nodes.
	Capacity int64 `json:"capacity"`
	// Bookable is Capacity less drained or down nodes, maintenance,
	// foreign reservations and the unbookable share, now.
	Bookable int64 `json:"bookable"`
	// Booked is committed to bookings now.
	Booked int64 `json:"booked"`
	// Allocated is held by running jobs (every account).
	Allocated int64 `json:"allocated"`
	// Free is Capacity less Allocated: idle GPUs.
	Free int64 `json:"free"`
}

// Snapshot is one cycle's reading of everything the tenant routes and the
// metrics show besides bookings (read live): taken at once, used by every
// request until the next cycle.
type Snapshot struct {
	At      time.Time
	Period  meter.Period
	Tenants []tenant.Tenant // by name
	// Use is each tenant's TypeUse per type, by type.
	Use map[string][]TypeUse
	// Jobs are each tenant's jobs (its account's), by id.
	Jobs   map[string][]burst.Job
	Plan   burst.Plan
	Stored []burst.StoredRefusal
	Pool   []PoolType // by type
	// Usage is the current period priced (every account).
	Usage           export.Summary
	IngestedThrough time.Time
	// Errors holds the parts whose last read failed, with the error;
	// PartAt when each part was last read successfully.
	Errors map[string]string
	PartAt map[string]time.Time

	byName   map[string]int
	begun    time.Time // when its reads began (At is truncated to the second)
	jobs     []burst.Job
	inv      reserve.Inventory
	upcoming []reserve.Booking              // bookings that end after At
	now      []reserve.Booking              // of them, those in force at At
	avail    []reserve.ResourceAvailability // each resource in [At, At+1s)
}

// Tenant returns the tenant called name.
func (s *Snapshot) Tenant(name string) (tenant.Tenant, bool) {
	if s == nil {
		return tenant.Tenant{}, false
	}
	i, ok := s.byName[name]
	if !ok {
		return tenant.Tenant{}, false
	}
	return s.Tenants[i], true
}

// derive computes the per-tenant and per-type figures from the parts.
func (s *Snapshot) derive(src Sources) {
	s.index()
	use := useTable{}
	for _, t := range s.Tenants {
		for typ, q := range t.GPUs {
			use.get(t.Name, typ).Quota = &q
		}
	}
	allocated := s.countJobs(src, use)
	booked := s.countBooked(src.Settings, use)
	s.Use = use.sorted()
	s.Pool = s.pool(allocated, booked)
}

// index sorts the tenants by name and indexes them (Tenant).
func (s *Snapshot) index() {
	slices.SortFunc(s.Tenants, func(a, b tenant.Tenant) int { return strings.Compare(a.Name, b.Name) })
	s.byName = make(map[string]int, len(s.Tenants))
	for i, t := range s.Tenants {
		s.byName[t.Name] = i
	}
}

// useTable is each tenant's TypeUse per type, as derive fills it.
type useTable map[string]map[string]*TypeUse

// get is tenant tn's TypeUse of typ, added when new.
func (use useTable) get(tn, typ string) *TypeUse {
	m := use[tn]
	if m == nil {
		m = map[string]*TypeUse{}
		use[tn] = m
	}
	u := m[typ]
	if u == nil {
		u = &TypeUse{Type: typ}
		m[typ] = u
	}
	return u
}

// sorted is each tenant's TypeUse by type.
func (use useTable) sorted() map[string][]TypeUse {
	out := make(map[string][]TypeUse, len(use))
	for tn, m := range use {
		us := make([]TypeUse, 0, len(m))
		for _, typ := range slices.Sorted(maps.Keys(m)) {
			us = append(us, *m[typ])
		}
		out[tn] = us
	}
	return out
}

// countJobs files each job under its tenant (Jobs, by id) and counts its
// GPUs in use: pending, running (in quota or bursting). It returns the
// GPUs running jobs of every account hold, per type.
func (s *Snapshot) countJobs(src Sources, use useTable) map[string]int64 {
	s.Jobs = map[string][]burst.Job{}
	allocated := map[string]int64{}
	for _, j := range s.jobs {
		running := j.Running()
		for typ, n := range j.TotalGPUs() {
			if running {
				allocated[gpuType(typ)] += n
			}
		}
		t, ok := s.Tenant(j.Account)
		if !ok {
			continue
		}
		s.Jobs[t.Name] = append(s.Jobs[t.Name], j)
		onDemand := j.QOS == src.OnDemandQOS || j.Partition == src.OnDemandPartition
		for typ, n := range j.TotalGPUs() {
			if n == 0 {
				continue
			}
			u := use.get(t.Name, gpuType(typ))
			switch {
			case j.Pending():
				u.Pending += n
			case running:
				u.Allocated += n
				if onDemand {
					u.Bursting += n
				} else if j.QOS == src.QOSPrefix+t.Name {
					u.InQuota += n
				}
			}
		}
	}
	for _, js := range s.Jobs {
		slices.SortFunc(js, func(a, b burst.Job) int { return int(a.ID - b.ID) })
	}
	return allocated
}

// gpuType is a job's GPU type, Untyped for GPUs asked for without one.
func gpuType(typ string) string {
	if typ == "" {
		return Untyped
	}
	return typ
}

// countBooked counts the GPUs of the bookings in force at At, per tenant
// (use) and per type (returned).
func (s *Snapshot) countBooked(settings reserve.Settings, use useTable) map[string]int64 {
	booked := map[string]int64{}
	var buf []reserve.Commitment
	for _, b := range s.now {
		if b.State == reserve.StateCancelled || b.State == reserve.StateEnded {
			continue
		}
		buf = settings.AppendCommitments(buf[:0], b, s.inv)
		for _, c := range buf {
			k, typ := c.Resource.Split()
			if k != reserve.KindGPU || c.Start > s.At.Unix() || c.End <= s.At.Unix() {
				continue
			}
			booked[typ] += int64(c.Count)
			if _, ok := s.Tenant(b.Tenant); ok {
				use.get(b.Tenant, typ).Booked += int64(c.Count)
			}
		}
	}
	return booked
}

// pool is the pool's position per type: every type slurmctld reports
// (bookable and booked as admission counts them), plus any in use.
func (s *Snapshot) pool(allocated, booked map[string]int64) []PoolType {
	now := map[string]reserve.Bucket{}
	for _, r := range s.avail {
		if k, typ := r.Resource.Split(); k == reserve.KindGPU && len(r.Buckets) > 0 {
			now[typ] = r.Buckets[0]
		}
	}
	types := map[string]bool{}
	for _, t := range s.inv.Types() {
		types[t] = true
	}
	for t := range now {
		types[t] = true
	}
	for t := range allocated {
		types[t] = true
	}
	var out []PoolType
	for _, typ := range slices.Sorted(maps.Keys(types)) {
		p := PoolType{Type: typ, Capacity: int64(s.inv.Total(typ)), Allocated: allocated[typ], Booked: booked[typ]}
		if b, ok := now[typ]; ok {
			p.Bookable, p.Booked = int64(b.Capacity), int64(b.Committed)
		}
		p.Free = max(p.Capacity-p.Allocated, 0)
		out = append(out, p)
	}
	return out
}
