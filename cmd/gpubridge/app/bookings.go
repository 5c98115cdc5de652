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
	k, err := e.on(ctx, needSlurm)
	if err != nil {
		return wire.Bookings{}, err
	}
	bk, err := wire.OpenBookings(wire.BookingParams{Config: k.Config, DB: k.DB, Cluster: k.Cluster, Slurm: k.Slurm})
	if err == nil {
		// Bookings' costs (a tenant's monthly spend limit) at the booked
		// tier of the rate card in force (charges.go).
		bk.Service.Pricing = bookingPricing(k.DB)
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

// AddBookingRequest is add booking: the booking Actor asks for, shown in
// Times; Confirm (nil: no question) is asked first.
type AddBookingRequest struct {
	Actor   string
	Booking reserve.Request
	Times   view.Times
	Confirm func(string) error
}

// ParseAddBooking reads add booking's key=value options (reserve.ParseAdd,
// times without an offset read in $TZ; local: printed in $TZ).
func ParseAddBooking(where map[string]string, local bool) (AddBookingRequest, error) {
	z, err := BookingTimes(local)
	if err != nil {
		return AddBookingRequest{}, err
	}
	req, ps := reserve.ParseAdd(where, time.Now(), z.Zone)
	return AddBookingRequest{Booking: req, Times: z}, bookingProblems(ps)
}

// AddBooking admits the booking r asks for. With a Confirm, it first
// checks the booking without storing it and asks with what it would add;
// the booking is admitted afresh after the answer. It returns the booking
// with the settings it was admitted under.
func (e *Env) AddBooking(ctx context.Context, r AddBookingRequest) (AddedBooking, error) {
	bk, err := e.Bookings(ctx)
	if err != nil {
		return AddedBooking{}, err
	}
	cases := BookingCases{Service: bk.Service}
	if r.Confirm != nil {
		b, err := cases.Check(ctx, r.Actor, r.Booking)
		if err != nil {
			return AddedBooking{}, err
		}
		if err := r.Confirm(view.Describe(" Adding booking", b, r.Times)); err != nil {
			return AddedBooking{}, err
		}
	}
	b, err := cases.Add(ctx, r.Actor, r.Booking)
	if err != nil {
		return AddedBooking{}, err
	}
	return AddedBooking{Booking: b, Settings: bk.Service.Settings, Times: r.Times, At: time.Now()}, nil
}

// ModifyBookingRequest is modify booking: Actor changes booking ID by
// Change, or, when PerNode is set, records its GPUs per node alone
// (recordPerNode). Asked are the options as typed, which the
// confirmation (Confirm, nil: none) shows.
type ModifyBookingRequest struct {
	Actor   string
	ID      int64
	Change  reserve.Change
	PerNode map[string]int
	Asked   map[string]string
	Times   view.Times
	Confirm func(string) error
}

// ParseModifyBooking reads modify booking ID set key=value ...
// (reserve.ParseChange, or pernode= given alone; none is a usage error).
func ParseModifyBooking(id string, set map[string]string, local bool) (ModifyBookingRequest, error) {
	if len(set) == 0 {
		return ModifyBookingRequest{}, Inputf("usage: gpubridge modify booking ID set key=value ...")
	}
	n, err := ParseBookingID(id)
	if err != nil {
		return ModifyBookingRequest{}, err
	}
	r := ModifyBookingRequest{ID: n, Asked: set}
	if v, ok := set[reserve.PerNodeKey]; ok {
		if len(set) > 1 {
			return ModifyBookingRequest{}, Inputf("pernode=: give it alone (it records a figure an old booking lacks, and changes nothing else); make other changes in a second command")
		}
		per, ps := reserve.ParsePerNode(v)
		if err := bookingProblems(ps); err != nil {
			return ModifyBookingRequest{}, err
		}
		r.PerNode = per
		r.Times, err = BookingTimes(local)
		return r, err
	}
	if r.Times, err = BookingTimes(local); err != nil {
		return ModifyBookingRequest{}, err
	}
	ch, ps := reserve.ParseChange(set, time.Now(), r.Times.Zone)
	r.Change = ch
	return r, bookingProblems(ps)
}

// ModifyBooking changes booking r.ID as r asks, asking r.Confirm first
// when given. It returns the booking before and after.
func (e *Env) ModifyBooking(ctx context.Context, r ModifyBookingRequest) (ModifiedBooking, error) {
	if r.PerNode != nil {
		return e.recordPerNode(ctx, r)
	}
	bk, err := e.Bookings(ctx)
	if err != nil {
		return ModifiedBooking{}, err
	}
	cases := BookingCases{Service: bk.Service}
	cur, err := cases.Get(ctx, r.ID)
	if err != nil {
		return ModifiedBooking{}, err
	}
	if r.Confirm != nil {
		if err := r.Confirm(view.ModifyPrompt(cur, r.Asked)); err != nil {
			return ModifiedBooking{}, err
		}
	}
	before, after, err := cases.Modify(ctx, r.Actor, r.ID, r.Change)
	if err != nil {
		return ModifiedBooking{}, err
	}
	return ModifiedBooking{ID: r.ID, Before: before, After: after, Times: r.Times}, nil
}

// recordPerNode is modify booking ID set pernode=...: the GPUs per node of
// a whole-node booking stored before admission recorded them
// (reserve.Service.RecordPerNode). The confirmation shows the class's
// GPUs per node in the pool now, for the admin to compare.
func (e *Env) recordPerNode(ctx context.Context, r ModifyBookingRequest) (ModifiedBooking, error) {
	bk, err := e.Bookings(ctx)
	if err != nil {
		return ModifiedBooking{}, err
	}
	cur, err := BookingCases{Service: bk.Service}.Get(ctx, r.ID)
	if err != nil {
		return ModifiedBooking{}, err
	}
	if r.Confirm != nil {
		now := "not known (the cluster could not be read)"
		if inv, err := bk.Service.Source.Inventory(ctx); err == nil && cur.Kind == reserve.KindNode {
			now = reserve.FormatPerNode(bk.Service.Settings.PerNode(inv, cur.NodeClass))
		}
		if err := r.Confirm(view.PerNodePrompt(cur, r.PerNode, now)); err != nil {
			return ModifiedBooking{}, err
		}
	}
	before, after, err := bk.Service.RecordPerNode(ctx, r.Actor, r.ID, r.PerNode)
	if err != nil {
		return ModifiedBooking{}, bookingErr(err)
	}
	return ModifiedBooking{ID: r.ID, Before: before, After: after, Times: r.Times}, nil
}

// CancelBookingsRequest is delete booking: Actor cancels the bookings IDs
// after Confirm (nil: no question).
type CancelBookingsRequest struct {
	Actor   string
	IDs     []int64
	Confirm func(string) error
}

// CancelBookings cancels the bookings of r.IDs, all of which must exist,
// after r.Confirm (when given) with what it cancels. It returns the ids
// cancelled (up to a failure, with the failure; nil before it cancels)
// and the settings (their reservations' names).
func (e *Env) CancelBookings(ctx context.Context, r CancelBookingsRequest) (*CancelledBookings, error) {
	bk, err := e.BookingStore(ctx)
	if err != nil {
		return nil, err
	}
	cases := BookingCases{Service: bk.Service}
	var bs []reserve.Booking
	for _, id := range r.IDs {
		b, err := cases.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		bs = append(bs, b)
	}
	if r.Confirm != nil {
		if err := r.Confirm(view.CancelPrompt(bs)); err != nil {
			return nil, err
		}
	}
	c := &CancelledBookings{Settings: bk.Service.Settings}
	for _, id := range r.IDs {
		if _, err := cases.Cancel(ctx, r.Actor, id); err != nil {
			return c, err
		}
		c.IDs = append(c.IDs, id)
	}
	return c, nil
}

// ListBookingsRequest is show bookings: the bookings Filter keeps, only
// those of IDs when any are given; an id that names no booking is an
// error when Filtered is false (no filter was given).
type ListBookingsRequest struct {
	Filter   reserve.ListFilter
	IDs      []int64
	Filtered bool
	Times    view.Times
}

// ParseListBookings reads show bookings' ids and key=value filters
// (reserve.ParseList).
func ParseListBookings(ids []string, where map[string]string, local bool) (ListBookingsRequest, error) {
	z, err := BookingTimes(local)
	if err != nil {
		return ListBookingsRequest{}, err
	}
	lf, ps := reserve.ParseList(where, time.Now(), z.Zone)
	ns, err := ParseBookingIDs(ids)
	if err != nil {
		return ListBookingsRequest{}, err
	}
	return ListBookingsRequest{Filter: lf, IDs: ns, Filtered: len(where) > 0, Times: z}, bookingProblems(ps)
}

// ListBookings lists the bookings that r asks for.
func (e *Env) ListBookings(ctx context.Context, r ListBookingsRequest) (BookingList, error) {
	bk, err := e.BookingStore(ctx)
	if err != nil {
		return BookingList{}, err
	}
	bs, err := BookingCases{Service: bk.Service}.List(ctx, r.Filter)
	if err != nil {
		return BookingList{}, err
	}
	if len(r.IDs) > 0 {
		bs = slices.DeleteFunc(bs, func(b reserve.Booking) bool { return !slices.Contains(r.IDs, b.ID) })
	}
	if !r.Filtered {
		// An id that names no booking exits 2, as show tenants NAME does
		// (with filters, an id they leave out is no error).
		for _, n := range r.IDs {
			if !slices.ContainsFunc(bs, func(b reserve.Booking) bool { return b.ID == n }) {
				return BookingList{}, bookingErr(fmt.Errorf("booking %d: %w", n, reserve.ErrNotFound))
			}
		}
	}
	return BookingList{Bookings: bs, Times: r.Times}, nil
}

// AvailabilityRequest is show availability: the capacity Query asks for,
// shown in Times.
type AvailabilityRequest struct {
	Query reserve.AvailabilityQuery
	Times view.Times
}

// ParseAvailability reads show availability's keys
// (reserve.ParseAvailability).
func ParseAvailability(where map[string]string, local bool) (AvailabilityRequest, error) {
	z, err := BookingTimes(local)
	if err != nil {
		return AvailabilityRequest{}, err
	}
	q, ps := reserve.ParseAvailability(where, time.Now(), z.Zone)
	return AvailabilityRequest{Query: q, Times: z}, bookingProblems(ps)
}

// Availability is the free and booked capacity that r asks for.
func (e *Env) Availability(ctx context.Context, r AvailabilityRequest) (BookingAvailability, error) {
	bk, err := e.Bookings(ctx)
	if err != nil {
		return BookingAvailability{}, err
	}
	av, err := BookingCases{Service: bk.Service}.Availability(ctx, r.Query)
	return BookingAvailability{Availability: av, Times: r.Times}, err
}

// FindSlotsRequest is find slot: the windows of the shape Query asks
// for, shown in Times.
type FindSlotsRequest struct {
	Query reserve.SlotQuery
	Times view.Times
}

// ParseFindSlots reads find slot's keys (reserve.ParseSlotQuery).
func ParseFindSlots(where map[string]string, local bool) (FindSlotsRequest, error) {
	z, err := BookingTimes(local)
	if err != nil {
		return FindSlotsRequest{}, err
	}
	q, ps := reserve.ParseSlotQuery(where, time.Now(), z.Zone)
	return FindSlotsRequest{Query: q, Times: z}, bookingProblems(ps)
}

// FindSlots finds the earliest windows of the shape r asks for, with the
// query (what a miss names).
func (e *Env) FindSlots(ctx context.Context, r FindSlotsRequest) (FoundSlots, error) {
	bk, err := e.Bookings(ctx)
	if err != nil {
		return FoundSlots{}, err
	}
	slots, err := BookingCases{Service: bk.Service}.FindSlots(ctx, r.Query)
	return FoundSlots{Query: r.Query, Slots: slots, Times: r.Times}, err
}

// AddMaintenanceRequest is add maintenance: the window Actor records,
// shown in Times, after Confirm (nil: no question).
type AddMaintenanceRequest struct {
	Actor       string
	Maintenance reserve.Maintenance
	Times       view.Times
	Confirm     func(string) error
}

// ParseAddMaintenance reads add maintenance's keys
// (reserve.ParseMaintenance).
func ParseAddMaintenance(where map[string]string, local bool) (AddMaintenanceRequest, error) {
	z, err := BookingTimes(local)
	if err != nil {
		return AddMaintenanceRequest{}, err
	}
	m, ps := reserve.ParseMaintenance(where, time.Now(), z.Zone)
	return AddMaintenanceRequest{Maintenance: m, Times: z}, bookingProblems(ps)
}

// AddMaintenance records the maintenance window r describes after
// r.Confirm (when given); it returns the window with the bookings that no
// longer fit.
func (e *Env) AddMaintenance(ctx context.Context, r AddMaintenanceRequest) (AddedMaintenance, error) {
	bk, err := e.Bookings(ctx)
	if err != nil {
		return AddedMaintenance{}, err
	}
	if r.Confirm != nil {
		if err := r.Confirm(view.MaintenancePrompt(r.Maintenance, r.Times)); err != nil {
			return AddedMaintenance{}, err
		}
	}
	m, hit, err := bk.Service.AddMaintenance(ctx, r.Actor, r.Maintenance)
	if err != nil {
		return AddedMaintenance{}, bookingErr(err)
	}
	return AddedMaintenance{Maintenance: m, Hit: hit, Times: r.Times}, nil
}

// ParseMaintenanceID reads a maintenance window's id, a positive number.
func ParseMaintenanceID(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, Inputf("%q is not a maintenance id (see `gpubridge show maintenance`)", s)
	}
	return n, nil
}

// DeleteMaintenance removes maintenance window n (ParseMaintenanceID)
// after confirm (when given).
func (e *Env) DeleteMaintenance(ctx context.Context, actor string, n int64, confirm func(string) error) (reserve.Maintenance, error) {
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
