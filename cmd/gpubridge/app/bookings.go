package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"
	_ "time/tzdata" // TZ names resolve on hosts without zoneinfo too

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/view"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/wire"
)

// The booking use cases (bridge/reserve) as the CLI runs them: each parses
// its key=value options into a request, builds the service, asks for a
// confirmation where the command does, and acts. Input problems are
// ErrInput (exit 2); refusals stay plain errors (exit 1).

// Bookings wires the booking use cases (bridge/reserve/setup) on the
// Env's clients: the store on gpubridge's database (for the cluster
// slurmrestd serves), slurmrestd, the tenant store.
func (e *Env) Bookings(ctx context.Context) (wire.Bookings, error) {
	return e.bookingsWith(ctx, true)
}

// BookingStore wires the use cases that read or write the booking store
// only (show and cancel bookings, maintenance windows): slurmrestd is not
// contacted when the configuration names the cluster, so the command
// skips its negotiation. Its Service has no Source.
func (e *Env) BookingStore(ctx context.Context) (wire.Bookings, error) {
	return e.bookingsWith(ctx, false)
}

func (e *Env) bookingsWith(ctx context.Context, needSlurm bool) (wire.Bookings, error) {
	c, err := e.Config()
	if err != nil {
		return wire.Bookings{}, err
	}
	if _, err := e.Clients(); err != nil {
		return wire.Bookings{}, err
	}
	bk, err := wire.OpenBookings(ctx, c, wire.BookingConnections{DB: e.DB, Slurm: e.Slurm, Cluster: e.ClusterName}, needSlurm)
	if err == nil {
		// Bookings' costs (a tenant's monthly spend limit) at the rate
		// card's booked tier (charges.go).
		if db, derr := e.DB(ctx); derr == nil {
			bk.Service.Coster = bookingCoster(ctx, db)
		}
	}
	return bk, err
}

// Projector is the booking projector for actor (the reconcile step the
// daemon schedules and `gpubridge project` runs).
func (e *Env) Projector(ctx context.Context, actor string) (*reserve.Projector, error) {
	bk, err := e.Bookings(ctx)
	if err != nil {
		return nil, err
	}
	return bk.Projector(actor), nil
}

// BookingTimes are $TZ, the zone of times written without an offset, and
// how a command prints times (local: in $TZ with their offset).
func BookingTimes(local bool) (view.Times, error) {
	zone, err := reserve.LoadZone(os.Getenv("TZ"))
	if err != nil {
		return view.Times{}, Input(err)
	}
	return view.Times{Zone: zone, Local: local}, nil
}

// bookingErr gives input problems exit status 2 and keeps refusals (1):
// a booking changed since the command read it is a refusal, not bad input.
func bookingErr(err error) error {
	var ps reserve.Problems
	if errors.As(err, &ps) && !errors.Is(err, reserve.ErrChanged) {
		return Input(err)
	}
	if errors.Is(err, reserve.ErrNotFound) {
		return Input(fmt.Errorf("%w (see `gpubridge show bookings`)", err))
	}
	return err
}

// bookingProblems makes input problems an input error (nil when there are
// none).
func bookingProblems(ps reserve.Problems) error {
	if len(ps) == 0 {
		return nil
	}
	return Input(ps)
}

// ParseBookingID reads a booking id, a positive number.
func ParseBookingID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, Inputf("%q is not a booking id (a positive number; see `gpubridge show bookings`)", s)
	}
	return id, nil
}

// ParseBookingIDs reads booking ids.
func ParseBookingIDs(ss []string) ([]int64, error) {
	var ids []int64
	for _, s := range ss {
		id, err := ParseBookingID(s)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// AddBooking admits the booking that where asks for (reserve.ParseAdd,
// times without an offset read in $TZ; local: printed in $TZ) for actor.
// With confirm, it first checks the booking without storing it and asks
// confirm with what it would add; the booking is admitted afresh after the
// answer. It returns the booking with the settings it was admitted under.
func (e *Env) AddBooking(ctx context.Context, actor string, where map[string]string, local bool, confirm func(string) error) (AddedBooking, error) {
	z, err := BookingTimes(local)
	if err != nil {
		return AddedBooking{}, err
	}
	req, ps := reserve.ParseAdd(where, time.Now(), z.Zone)
	if err := bookingProblems(ps); err != nil {
		return AddedBooking{}, err
	}
	bk, err := e.Bookings(ctx)
	if err != nil {
		return AddedBooking{}, err
	}
	svc := bk.Service
	if confirm != nil {
		b, err := svc.Check(ctx, actor, req)
		if err != nil {
			return AddedBooking{}, bookingErr(err)
		}
		if err := confirm(view.Describe(" Adding booking", b, z)); err != nil {
			return AddedBooking{}, err
		}
	}
	b, err := svc.Add(ctx, actor, req)
	if err != nil {
		return AddedBooking{}, bookingErr(err)
	}
	return AddedBooking{Booking: b, Settings: svc.Settings, Times: z, At: time.Now()}, nil
}

// ModifyBooking changes booking id by set (the key=value options after
// `set`, reserve.ParseChange; none is a usage error), asking confirm first
// when given. It returns the booking before and after.
func (e *Env) ModifyBooking(ctx context.Context, actor, id string, set map[string]string, local bool, confirm func(string) error) (ModifiedBooking, error) {
	if len(set) == 0 {
		return ModifiedBooking{}, Inputf("usage: gpubridge modify booking ID set key=value ...")
	}
	n, err := ParseBookingID(id)
	if err != nil {
		return ModifiedBooking{}, err
	}
	if v, ok := set[reserve.PerNodeKey]; ok {
		if len(set) > 1 {
			return ModifiedBooking{}, Inputf("pernode=: give it alone (it records a figure an old booking lacks, and changes nothing else); make other changes in a second command")
		}
		return e.recordPerNode(ctx, actor, n, v, local, confirm)
	}
	z, err := BookingTimes(local)
	if err != nil {
		return ModifiedBooking{}, err
	}
	ch, ps := reserve.ParseChange(set, time.Now(), z.Zone)
	if err := bookingProblems(ps); err != nil {
		return ModifiedBooking{}, err
	}
	bk, err := e.Bookings(ctx)
	if err != nil {
		return ModifiedBooking{}, err
	}
	cur, err := bk.Service.Get(ctx, n)
	if err != nil {
		return ModifiedBooking{}, bookingErr(err)
	}
	if confirm != nil {
		if err := confirm(view.ModifyPrompt(cur, set)); err != nil {
			return ModifiedBooking{}, err
		}
	}
	before, after, err := bk.Service.Modify(ctx, actor, n, ch)
	if err != nil {
		return ModifiedBooking{}, bookingErr(err)
	}
	return ModifiedBooking{ID: n, Before: before, After: after, Times: z}, nil
}

// recordPerNode is modify booking ID set pernode=...: the GPUs per node of
// a whole-node booking stored before admission recorded them
// (reserve.Service.RecordPerNode). The confirmation shows the class's
// GPUs per node in the pool now, for the admin to compare.
func (e *Env) recordPerNode(ctx context.Context, actor string, id int64, v string, local bool, confirm func(string) error) (ModifiedBooking, error) {
	per, ps := reserve.ParsePerNode(v)
	if err := bookingProblems(ps); err != nil {
		return ModifiedBooking{}, err
	}
	z, err := BookingTimes(local)
	if err != nil {
		return ModifiedBooking{}, err
	}
	bk, err := e.Bookings(ctx)
	if err != nil {
		return ModifiedBooking{}, err
	}
	cur, err := bk.Service.Get(ctx, id)
	if err != nil {
		return ModifiedBooking{}, bookingErr(err)
	}
	if confirm != nil {
		now := "not known (the cluster could not be read)"
		if inv, err := bk.Service.Source.Inventory(ctx); err == nil && cur.Kind == reserve.KindNode {
			now = reserve.FormatPerNode(bk.Service.Settings.PerNode(inv, cur.NodeClass))
		}
		if err := confirm(view.PerNodePrompt(cur, per, now)); err != nil {
			return ModifiedBooking{}, err
		}
	}
	before, after, err := bk.Service.RecordPerNode(ctx, actor, id, per)
	if err != nil {
		return ModifiedBooking{}, bookingErr(err)
	}
	return ModifiedBooking{ID: id, Before: before, After: after, Times: z}, nil
}

// CancelBookings cancels the bookings of ids, all of which must exist,
// after confirm (when given) with what it cancels. It returns the ids
// cancelled (up to a failure, with the failure; nil before it cancels)
// and the settings (their reservations' names).
func (e *Env) CancelBookings(ctx context.Context, actor string, ids []string, confirm func(string) error) (*CancelledBookings, error) {
	ns, err := ParseBookingIDs(ids)
	if err != nil {
		return nil, err
	}
	bk, err := e.BookingStore(ctx)
	if err != nil {
		return nil, err
	}
	var bs []reserve.Booking
	for _, id := range ns {
		b, err := bk.Service.Get(ctx, id)
		if err != nil {
			return nil, bookingErr(err)
		}
		bs = append(bs, b)
	}
	if confirm != nil {
		if err := confirm(view.CancelPrompt(bs)); err != nil {
			return nil, err
		}
	}
	c := &CancelledBookings{Settings: bk.Service.Settings}
	for _, id := range ns {
		if _, err := bk.Service.Cancel(ctx, actor, id); err != nil {
			return c, bookingErr(err)
		}
		c.IDs = append(c.IDs, id)
	}
	return c, nil
}

// ListBookings lists the bookings that where keeps (reserve.ParseList),
// only those of ids when any are given.
func (e *Env) ListBookings(ctx context.Context, ids []string, where map[string]string, local bool) (BookingList, error) {
	z, err := BookingTimes(local)
	if err != nil {
		return BookingList{}, err
	}
	lf, ps := reserve.ParseList(where, time.Now(), z.Zone)
	ns, err := ParseBookingIDs(ids)
	if err != nil {
		return BookingList{}, err
	}
	if err := bookingProblems(ps); err != nil {
		return BookingList{}, err
	}
	bk, err := e.BookingStore(ctx)
	if err != nil {
		return BookingList{}, err
	}
	bs, err := bk.Service.List(ctx, lf)
	if err != nil {
		return BookingList{}, err
	}
	if len(ns) > 0 {
		bs = slices.DeleteFunc(bs, func(b reserve.Booking) bool { return !slices.Contains(ns, b.ID) })
	}
	if len(where) == 0 {
		// An id that names no booking exits 2, as show tenants NAME does
		// (with filters, an id they leave out is no error).
		for _, n := range ns {
			if !slices.ContainsFunc(bs, func(b reserve.Booking) bool { return b.ID == n }) {
				return BookingList{}, bookingErr(fmt.Errorf("booking %d: %w", n, reserve.ErrNotFound))
			}
		}
	}
	return BookingList{Bookings: bs, Times: z}, nil
}

// Availability is the free and booked capacity that where asks for
// (reserve.ParseAvailability).
func (e *Env) Availability(ctx context.Context, where map[string]string, local bool) (BookingAvailability, error) {
	z, err := BookingTimes(local)
	if err != nil {
		return BookingAvailability{}, err
	}
	q, ps := reserve.ParseAvailability(where, time.Now(), z.Zone)
	if err := bookingProblems(ps); err != nil {
		return BookingAvailability{}, err
	}
	bk, err := e.Bookings(ctx)
	if err != nil {
		return BookingAvailability{}, err
	}
	av, err := bk.Service.Availability(ctx, q)
	return BookingAvailability{Availability: av, Times: z}, bookingErr(err)
}

// FindSlots finds the earliest windows of the shape where asks for
// (reserve.ParseSlotQuery), with the query (what a miss names).
func (e *Env) FindSlots(ctx context.Context, where map[string]string, local bool) (FoundSlots, error) {
	z, err := BookingTimes(local)
	if err != nil {
		return FoundSlots{}, err
	}
	q, ps := reserve.ParseSlotQuery(where, time.Now(), z.Zone)
	if err := bookingProblems(ps); err != nil {
		return FoundSlots{}, err
	}
	bk, err := e.Bookings(ctx)
	if err != nil {
		return FoundSlots{}, err
	}
	slots, err := bk.Service.FindSlots(ctx, q)
	return FoundSlots{Query: q, Slots: slots, Times: z}, bookingErr(err)
}

// AddMaintenance records the maintenance window where describes
// (reserve.ParseMaintenance) after confirm (when given); it returns the
// window with the bookings that no longer fit.
func (e *Env) AddMaintenance(ctx context.Context, actor string, where map[string]string, local bool, confirm func(string) error) (AddedMaintenance, error) {
	z, err := BookingTimes(local)
	if err != nil {
		return AddedMaintenance{}, err
	}
	m, ps := reserve.ParseMaintenance(where, time.Now(), z.Zone)
	if err := bookingProblems(ps); err != nil {
		return AddedMaintenance{}, err
	}
	bk, err := e.Bookings(ctx)
	if err != nil {
		return AddedMaintenance{}, err
	}
	if confirm != nil {
		if err := confirm(view.MaintenancePrompt(m, z)); err != nil {
			return AddedMaintenance{}, err
		}
	}
	m, hit, err := bk.Service.AddMaintenance(ctx, actor, m)
	if err != nil {
		return AddedMaintenance{}, bookingErr(err)
	}
	return AddedMaintenance{Maintenance: m, Hit: hit, Times: z}, nil
}

// DeleteMaintenance removes maintenance window id after confirm (when
// given).
func (e *Env) DeleteMaintenance(ctx context.Context, actor, id string, confirm func(string) error) (reserve.Maintenance, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return reserve.Maintenance{}, Inputf("%q is not a maintenance id (see `gpubridge show maintenance`)", id)
	}
	bk, err := e.BookingStore(ctx)
	if err != nil {
		return reserve.Maintenance{}, err
	}
	if confirm != nil {
		if err := confirm(view.MaintenanceDeletePrompt(n)); err != nil {
			return reserve.Maintenance{}, err
		}
	}
	m, err := bk.Service.DeleteMaintenance(ctx, actor, n)
	return m, bookingErr(err)
}

// MaintenanceWindows are the maintenance windows (local: printed in $TZ).
func (e *Env) MaintenanceWindows(ctx context.Context, local bool) (MaintenanceList, error) {
	z, err := BookingTimes(local)
	if err != nil {
		return MaintenanceList{}, err
	}
	bk, err := e.BookingStore(ctx)
	if err != nil {
		return MaintenanceList{}, err
	}
	ms, err := bk.Service.Maintenance(ctx)
	return MaintenanceList{Windows: ms, Times: z}, err
}

// Projection is how `gpubridge project` runs the projector.
type Projection struct {
	Actor            string
	DryRun           bool // change nothing (and take no writer lock)
	AllowMassRemoval bool // remove orphans even when the store looks empty or wrong
	Log              bool // log the actions (component bookings)
}

// Project projects the bookings onto Slurm once, under the writer lock
// unless it is a dry run (one writer at a time, like apply and the
// daemon). A failure to start comes back with a nil result; the
// projection's own failures with its report.
func (e *Env) Project(ctx context.Context, o Projection) (*Projected, error) {
	p, err := e.Projector(ctx, o.Actor)
	if err != nil {
		return nil, err
	}
	p.DryRun, p.AllowMassRemoval = o.DryRun, o.AllowMassRemoval
	if !o.DryRun {
		release, err := e.WriterLockFor(ctx, "gpubridge project")
		if err != nil {
			return nil, err
		}
		defer release()
	}
	if o.Log {
		p.Logger = e.Logger().With("component", "bookings") // the actions are printed anyway
	}
	rep, err := p.Project(ctx)
	reads, writes := e.Requests()
	return &Projected{Report: rep, DryRun: o.DryRun, Requests: view.Requests{Reads: reads, Writes: writes}}, err
}
