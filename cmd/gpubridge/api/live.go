package api

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// The ports the cycle reads through, each defined by its use here.

// TenantLister lists the tenants (bridge/tenantstore.Store).
type TenantLister interface {
	List(ctx context.Context) ([]tenant.Tenant, error)
}

// BurstPlanner decides like the burst controller without moving anything,
// and reads the refusals its last cycle stored (bridge/burst/service).
type BurstPlanner interface {
	Plan(ctx context.Context) (burst.Plan, error)
	StoredRefusals(ctx context.Context) ([]burst.StoredRefusal, error)
}

// UsageReader prices a period as `show usage` does (accounting/billing.Books).
type UsageReader interface {
	Summary(ctx context.Context, p meter.Period, account string) (export.Summary, error)
}

// BookingReader reads bookings and availability (bridge/reserve.Service).
type BookingReader interface {
	List(ctx context.Context, f reserve.ListFilter) ([]reserve.Booking, error)
	Availability(ctx context.Context, q reserve.AvailabilityQuery) (reserve.Availability, error)
}

// Sources are what a cycle reads. Any may be nil: its part stays empty.
type Sources struct {
	Tenants TenantLister
	// Jobs is the one bulk jobs read per cycle; the burst planner reads
	// the same jobs through it.
	Jobs      *JobCache
	Burst     BurstPlanner
	Inventory *InventoryCache
	Bookings  BookingReader
	Settings  reserve.Settings
	Usage     UsageReader
	// IngestedThrough is the end time of the newest ingested job run.
	IngestedThrough func(ctx context.Context) (time.Time, error)
	// Naming of the tenants' Slurm objects (config tenants.*).
	QOSPrefix, OnDemandPartition, OnDemandQOS string
}

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

// Live keeps the current snapshot and takes the next one every Interval,
// and on demand when a request finds it older than that (one read at a
// time however many requests wait).
type Live struct {
	Sources  Sources
	Interval time.Duration
	Logger   *slog.Logger
	Now      func() time.Time

	cur atomic.Pointer[Snapshot]
	sf  singleflight.Group
}

// DefaultInterval is how often the snapshot is taken by default.
const DefaultInterval = 15 * time.Second

func (l *Live) now() time.Time {
	if l.Now != nil {
		return l.Now().UTC()
	}
	return time.Now().UTC()
}

func (l *Live) interval() time.Duration {
	if l.Interval > 0 {
		return l.Interval
	}
	return DefaultInterval
}

// Current is the last snapshot without reading anything (nil before the
// first).
func (l *Live) Current() *Snapshot { return l.cur.Load() }

// Get returns a snapshot no older than Interval: the current one, or a
// fresh one (a request waits for the read only when none is fresh).
func (l *Live) Get(ctx context.Context) (*Snapshot, error) {
	if s := l.cur.Load(); s != nil && l.now().Sub(s.At) < l.interval() {
		return s, nil
	}
	return l.Refresh(ctx)
}

// Refresh takes a snapshot now (joining one under way).
func (l *Live) Refresh(ctx context.Context) (*Snapshot, error) {
	v, err, _ := l.sf.Do("snapshot", func() (any, error) {
		// A cycle is not cut short by the request that started it.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		s := l.take(rctx, l.cur.Load())
		l.cur.Store(s)
		return s, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Snapshot), nil
}

// RefreshNew returns a snapshot whose reads began after the call: unlike
// Refresh it does not settle for a read already under way.
func (l *Live) RefreshNew(ctx context.Context) (*Snapshot, error) {
	t := l.now()
	var s *Snapshot
	var err error
	for range 2 {
		if s, err = l.Refresh(ctx); err != nil || !s.begun.Before(t) {
			return s, err
		}
	}
	return s, err
}

// Run takes a snapshot every Interval until ctx ends.
func (l *Live) Run(ctx context.Context) {
	t := time.NewTicker(l.interval())
	defer t.Stop()
	for {
		if _, err := l.Refresh(ctx); err != nil && ctx.Err() == nil {
			l.log().Warn("snapshot", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (l *Live) log() *slog.Logger {
	if l.Logger != nil {
		return l.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// take reads every part; a part that fails keeps prev's value.
func (l *Live) take(ctx context.Context, prev *Snapshot) *Snapshot {
	src := l.Sources
	begun := l.now()
	at := begun.Truncate(time.Second)
	s := &Snapshot{At: at, begun: begun, Period: meter.PeriodOf(at), Errors: map[string]string{}, PartAt: map[string]time.Time{}}
	if prev != nil {
		s.Tenants, s.jobs, s.Plan, s.Stored, s.inv, s.upcoming, s.now, s.avail, s.Usage, s.IngestedThrough =
			prev.Tenants, prev.jobs, prev.Plan, prev.Stored, prev.inv, prev.upcoming, prev.now, prev.avail, prev.Usage, prev.IngestedThrough
		maps.Copy(s.PartAt, prev.PartAt)
	}
	var mu sync.Mutex // the parts are read side by side
	part := func(name string, read func() error) bool {
		err := read()
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			s.Errors[name] = err.Error()
			if prev == nil || prev.Errors[name] != err.Error() {
				l.log().Warn("snapshot part failed; keeping its previous reading", "part", name, "err", err)
			}
			return false
		}
		s.PartAt[name] = at
		return true
	}
	var wg sync.WaitGroup
	// Slurm (jobs, then the burst plan on the same jobs; the inventory)
	// and the database parts are read side by side.
	wg.Go(func() {
		if src.Tenants != nil {
			part(PartTenants, func() error {
				ts, err := src.Tenants.List(ctx)
				if err == nil {
					s.Tenants = ts
				}
				return err
			})
		}
		if src.Usage != nil {
			part(PartUsage, func() error {
				u, err := src.Usage.Summary(ctx, s.Period, "")
				if err == nil {
					s.Usage = u
				}
				return err
			})
		}
		if src.IngestedThrough != nil {
			part(PartIngest, func() error {
				t, err := src.IngestedThrough(ctx)
				if err == nil {
					s.IngestedThrough = t
				}
				return err
			})
		}
	})
	wg.Go(func() {
		jobsOK := true
		if src.Jobs != nil {
			jobsOK = part(PartJobs, func() error {
				js, err := src.Jobs.Refresh(ctx)
				if err == nil {
					s.jobs = js
				}
				return err
			})
		}
		if src.Burst != nil && jobsOK {
			part(PartBurst, func() error {
				p, err := src.Burst.Plan(ctx)
				if err != nil {
					return err
				}
				st, err := src.Burst.StoredRefusals(ctx)
				if err != nil {
					return err
				}
				s.Plan, s.Stored = p, st
				return nil
			})
		}
	})
	wg.Go(func() {
		if src.Inventory != nil {
			part(PartInventory, func() error {
				inv, err := src.Inventory.Refresh(ctx)
				if err == nil {
					s.inv = inv
				}
				return err
			})
		}
		if src.Bookings != nil {
			part(PartBookings, func() error {
				bs, err := src.Bookings.List(ctx, reserve.ListFilter{From: at})
				if err != nil {
					return err
				}
				var in []reserve.Booking
				for _, b := range bs {
					if !b.Start.After(at) && b.End.After(at) {
						in = append(in, b)
					}
				}
				av, err := src.Bookings.Availability(ctx, reserve.AvailabilityQuery{From: at, To: at.Add(time.Second), Step: time.Second})
				if err != nil {
					return err
				}
				s.upcoming, s.now, s.avail = bs, in, av.Resources
				return nil
			})
		}
	})
	wg.Wait()
	s.derive(src)
	return s
}

// derive computes the per-tenant and per-type figures from the parts.
func (s *Snapshot) derive(src Sources) {
	slices.SortFunc(s.Tenants, func(a, b tenant.Tenant) int { return strings.Compare(a.Name, b.Name) })
	s.byName = make(map[string]int, len(s.Tenants))
	for i, t := range s.Tenants {
		s.byName[t.Name] = i
	}
	use := map[string]map[string]*TypeUse{}
	get := func(tn, typ string) *TypeUse {
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
	for _, t := range s.Tenants {
		for typ, q := range t.GPUs {
			get(t.Name, typ).Quota = &q
		}
	}
	s.Jobs = map[string][]burst.Job{}
	allocated := map[string]int64{}
	for _, j := range s.jobs {
		running := j.Running()
		for typ, n := range j.TotalGPUs() {
			if typ == "" {
				typ = Untyped
			}
			if running {
				allocated[typ] += n
			}
		}
		t, ok := s.Tenant(j.Account)
		if !ok {
			continue
		}
		s.Jobs[t.Name] = append(s.Jobs[t.Name], j)
		onDemand := j.QOS == src.OnDemandQOS || j.Partition == src.OnDemandPartition
		for typ, n := range j.TotalGPUs() {
			if typ == "" {
				typ = Untyped
			}
			if n == 0 {
				continue
			}
			u := get(t.Name, typ)
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
	booked := map[string]int64{}
	var buf []reserve.Commitment
	for _, b := range s.now {
		if b.State == reserve.StateCancelled || b.State == reserve.StateEnded {
			continue
		}
		buf = src.Settings.AppendCommitments(buf[:0], b, s.inv)
		for _, c := range buf {
			k, typ := c.Resource.Split()
			if k != reserve.KindGPU || c.Start > s.At.Unix() || c.End <= s.At.Unix() {
				continue
			}
			booked[typ] += int64(c.Count)
			if _, ok := s.Tenant(b.Tenant); ok {
				get(b.Tenant, typ).Booked += int64(c.Count)
			}
		}
	}
	s.Use = make(map[string][]TypeUse, len(use))
	for tn, m := range use {
		out := make([]TypeUse, 0, len(m))
		for _, typ := range slices.Sorted(maps.Keys(m)) {
			out = append(out, *m[typ])
		}
		s.Use[tn] = out
	}
	// The pool: every type slurmctld reports (bookable and booked as
	// admission counts them), plus any in use.
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
	s.Pool = nil
	for _, typ := range slices.Sorted(maps.Keys(types)) {
		p := PoolType{Type: typ, Capacity: int64(s.inv.Total(typ)), Allocated: allocated[typ], Booked: booked[typ]}
		if b, ok := now[typ]; ok {
			p.Bookable, p.Booked = int64(b.Capacity), int64(b.Committed)
		}
		p.Free = max(p.Capacity-p.Allocated, 0)
		s.Pool = append(s.Pool, p)
	}
}

// JobCache is a burst.JobLister that reads through to Jobs at most once
// per TTL: the snapshot's read (Refresh) and the burst planner's within
// the same cycle are one bulk read.
type JobCache struct {
	Jobs burst.JobLister
	TTL  time.Duration
	Now  func() time.Time

	mu   sync.Mutex
	at   time.Time
	last []burst.Job
}

var _ burst.JobLister = (*JobCache)(nil)

// ListJobs implements burst.JobLister: the last read while younger than
// TTL, else a new one.
func (c *JobCache) ListJobs(ctx context.Context) ([]burst.Job, error) {
	c.mu.Lock()
	if c.last != nil && c.clock().Sub(c.at) < c.TTL {
		js := c.last
		c.mu.Unlock()
		return js, nil
	}
	c.mu.Unlock()
	return c.Refresh(ctx)
}

// Refresh reads the jobs now.
func (c *JobCache) Refresh(ctx context.Context) ([]burst.Job, error) {
	js, err := c.Jobs.ListJobs(ctx)
	if err != nil {
		return nil, err
	}
	if js == nil {
		js = []burst.Job{}
	}
	c.mu.Lock()
	c.at, c.last = c.clock(), js
	c.mu.Unlock()
	return js, nil
}

func (c *JobCache) clock() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// InventoryCache is a reserve.Source that reads through at most once per
// TTL: the read-only booking routes (availability, find slot, list) share
// one inventory read per cycle. Admission never goes through it.
type InventoryCache struct {
	Source reserve.Source
	TTL    time.Duration
	Now    func() time.Time

	mu   sync.Mutex
	at   time.Time
	last *reserve.Inventory
	sf   singleflight.Group
}

var _ reserve.Source = (*InventoryCache)(nil)

// Inventory implements reserve.Source.
func (c *InventoryCache) Inventory(ctx context.Context) (reserve.Inventory, error) {
	c.mu.Lock()
	if c.last != nil && c.clock().Sub(c.at) < c.TTL {
		inv := *c.last
		c.mu.Unlock()
		return inv, nil
	}
	c.mu.Unlock()
	return c.Refresh(ctx)
}

// Refresh reads the inventory now (joining a read under way).
func (c *InventoryCache) Refresh(ctx context.Context) (reserve.Inventory, error) {
	v, err, _ := c.sf.Do("inventory", func() (any, error) {
		inv, err := c.Source.Inventory(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the cluster: %w", err)
		}
		c.mu.Lock()
		c.at, c.last = c.clock(), &inv
		c.mu.Unlock()
		return inv, nil
	})
	if err != nil {
		return reserve.Inventory{}, err
	}
	return v.(reserve.Inventory), nil
}

func (c *InventoryCache) clock() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}
