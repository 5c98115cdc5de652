package api

import (
	"context"
	"log/slog"
	"maps"
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

// UsageReader prices a period: the usage use case `show usage` runs
// (cmd/gpubridge/app.UsageCases, on accounting/billing.Books).
type UsageReader interface {
	Summary(ctx context.Context, p meter.Period, account string) (export.Summary, error)
}

// BookingReader reads bookings and availability: the booking use cases
// reads (Bookings).
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
	// running is set while Run takes the snapshots: a request then does
	// not wait for a read that Run is about to start or has under way.
	running atomic.Bool
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
//
// While Run takes them, a snapshot stays current for two intervals: its
// age (from the second its read began) passes one interval just before
// Run's next read ends, and every request of that moment would
// otherwise wait for the read; they take the previous one meanwhile.
func (l *Live) Get(ctx context.Context) (*Snapshot, error) {
	fresh := l.interval()
	if l.running.Load() {
		fresh *= 2
	}
	if s := l.cur.Load(); s != nil && l.now().Sub(s.At) < fresh {
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
	l.running.Store(true)
	defer l.running.Store(false)
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

// take reads every part; a part that fails keeps prev's value. Slurm
// (jobs, then the burst plan on the same jobs; the inventory and the
// calendar) and the database parts are read side by side.
func (l *Live) take(ctx context.Context, prev *Snapshot) *Snapshot {
	begun := l.now()
	s := newSnapshot(begun, prev)
	r := &partReader{s: s, prev: prev, log: l.log()}
	var wg sync.WaitGroup
	wg.Go(func() { l.readStore(ctx, r) })
	wg.Go(func() { l.readJobs(ctx, r) })
	wg.Go(func() { l.readCalendar(ctx, r) })
	wg.Wait()
	s.derive(l.Sources)
	return s
}

// newSnapshot is a snapshot begun at begun, holding prev's parts (each
// replaced as it is read again) and when they were read.
func newSnapshot(begun time.Time, prev *Snapshot) *Snapshot {
	at := begun.Truncate(time.Second)
	s := &Snapshot{At: at, begun: begun, Period: meter.PeriodOf(at), Errors: map[string]string{}, PartAt: map[string]time.Time{}}
	if prev != nil {
		s.Tenants, s.jobs, s.Plan, s.Stored, s.inv, s.upcoming, s.now, s.avail, s.Usage, s.IngestedThrough =
			prev.Tenants, prev.jobs, prev.Plan, prev.Stored, prev.inv, prev.upcoming, prev.now, prev.avail, prev.Usage, prev.IngestedThrough
		maps.Copy(s.PartAt, prev.PartAt)
	}
	return s
}

// partReader records, for the parts read side by side, which were read
// (Snapshot.PartAt) and which failed (Snapshot.Errors, logged once per
// new error).
type partReader struct {
	s    *Snapshot
	prev *Snapshot
	log  *slog.Logger
	mu   sync.Mutex
}

// read reads part name with read; false when it failed.
func (r *partReader) read(name string, read func() error) bool {
	err := read()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.s.Errors[name] = err.Error()
		if r.prev == nil || r.prev.Errors[name] != err.Error() {
			r.log.Warn("snapshot part failed; keeping its previous reading", "part", name, "err", err)
		}
		return false
	}
	r.s.PartAt[name] = r.s.At
	return true
}

// readStore reads the database's parts: the tenants, the current
// period's usage and how far the ingest has read.
func (l *Live) readStore(ctx context.Context, r *partReader) {
	src, s := l.Sources, r.s
	if src.Tenants != nil {
		r.read(PartTenants, func() error {
			ts, err := src.Tenants.List(ctx)
			if err == nil {
				s.Tenants = ts
			}
			return err
		})
	}
	if src.Usage != nil {
		r.read(PartUsage, func() error {
			u, err := src.Usage.Summary(ctx, s.Period, "")
			if err == nil {
				s.Usage = u
			}
			return err
		})
	}
	if src.IngestedThrough != nil {
		r.read(PartIngest, func() error {
			t, err := src.IngestedThrough(ctx)
			if err == nil {
				s.IngestedThrough = t
			}
			return err
		})
	}
}

// readJobs reads the jobs, then (when they were read) the burst plan on
// the same jobs with the refusals stored.
func (l *Live) readJobs(ctx context.Context, r *partReader) {
	src, s := l.Sources, r.s
	jobsOK := true
	if src.Jobs != nil {
		jobsOK = r.read(PartJobs, func() error {
			js, err := src.Jobs.Refresh(ctx)
			if err == nil {
				s.jobs = js
			}
			return err
		})
	}
	if src.Burst != nil && jobsOK {
		r.read(PartBurst, func() error {
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
}

// readCalendar reads the inventory, and the bookings that end after the
// snapshot with those in force and the availability at its second.
func (l *Live) readCalendar(ctx context.Context, r *partReader) {
	src, s := l.Sources, r.s
	if src.Inventory != nil {
		r.read(PartInventory, func() error {
			inv, err := src.Inventory.Refresh(ctx)
			if err == nil {
				s.inv = inv
			}
			return err
		})
	}
	if src.Bookings != nil {
		r.read(PartBookings, func() error { return s.readBookings(ctx, src.Bookings) })
	}
}

// readBookings reads the bookings that end after At, those of them in
// force at At, and each resource's availability in [At, At+1s).
func (s *Snapshot) readBookings(ctx context.Context, src BookingReader) error {
	at := s.At
	bs, err := src.List(ctx, reserve.ListFilter{From: at})
	if err != nil {
		return err
	}
	var in []reserve.Booking
	for _, b := range bs {
		if !b.Start.After(at) && b.End.After(at) {
			in = append(in, b)
		}
	}
	av, err := src.Availability(ctx, reserve.AvailabilityQuery{From: at, To: at.Add(time.Second), Step: time.Second})
	if err != nil {
		return err
	}
	s.upcoming, s.now, s.avail = bs, in, av.Resources
	return nil
}
