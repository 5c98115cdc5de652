package reserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"
)

// Projector keeps Slurm's reservations true to the bookings: the reconcile
// step the daemon schedules (Project), also run by `gpubridge project`.
type Projector struct {
	Store    Store
	Slurm    Slurm
	Settings Settings
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Actor names the projector in the audit log; default "gpubridge".
	Actor string
	// AllowMassRemoval: see ProjectOptions.
	AllowMassRemoval bool
	// DryRun plans and reports without changing Slurm or the store.
	DryRun bool
	Logger *slog.Logger
}

// Outcome of one action.
const (
	OutcomeDone    = "done"
	OutcomeWaiting = "waiting" // Slurm refused for now (jobs inside, no room); retried next run
	OutcomeFailed  = "failed"
	OutcomePlanned = "planned" // dry run
)

// ActionResult is an action and what came of it.
type ActionResult struct {
	Action
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
}

// Report is what one projection did.
type Report struct {
	At      time.Time      `json:"at"`
	Actions []ActionResult `json:"actions"`
	// Bookings whose recorded state, reservation or note changed.
	Changed []Booking `json:"changed,omitempty"`
	// AtRisk are the bookings at risk after this run, with why (Note).
	AtRisk      []Booking `json:"atRisk,omitempty"`
	KeptOrphans []string  `json:"keptOrphans,omitempty"`
	KeptWhy     string    `json:"keptWhy,omitempty"`
	// States counts the bookings the run looked at, by present state
	// (the daemon's metrics).
	States map[State]int `json:"states"`
	// Now is each resource of the pool at the end of the run (the
	// daemon's metrics per type).
	Now []ResourceNow `json:"now,omitempty"`
}

// ResourceNow is a resource of the pool at one instant: its bookable
// capacity, what bookings commit of it, what is free for bookings, and
// how many of its bookings are at risk.
type ResourceNow struct {
	Resource Resource `json:"resource"`
	Type     string   `json:"type"`
	Capacity int      `json:"capacity"`
	Booked   int      `json:"booked"`
	Free     int      `json:"free"`
	AtRisk   int      `json:"atRisk"`
}

// Failed counts the actions that failed.
func (r Report) Failed() int {
	n := 0
	for _, a := range r.Actions {
		if a.Outcome == OutcomeFailed {
			n++
		}
	}
	return n
}

func (p *Projector) now() time.Time {
	if p.Now != nil {
		return p.Now().UTC()
	}
	return time.Now().UTC()
}

func (p *Projector) log() *slog.Logger {
	if p.Logger != nil {
		return p.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// Project reads the cluster and the bookings, plans, makes the changes in
// Slurm (removals first), and records per booking what Slurm holds, its
// state and why it waits or is at risk. Slurm refusing a change (jobs run
// inside, no room) is not an error: the booking says why and the next run
// retries. An error is returned when the cluster or the store cannot be
// read, or some action failed otherwise (after the others were tried).
func (p *Projector) Project(ctx context.Context) (Report, error) {
	now := p.now()
	rep := Report{At: now, States: map[State]int{}}
	inv, err := p.Slurm.Inventory(ctx)
	if err != nil {
		return rep, fmt.Errorf("project bookings: read the cluster: %w", err)
	}
	var ids []int64
	for _, r := range inv.Reservations {
		if id, ok := p.Settings.BookingID(r.Name); ok {
			ids = append(ids, id)
		}
	}
	live, err := p.Store.List(ctx, Filter{From: now})
	if err != nil {
		return rep, fmt.Errorf("project bookings: %w", err)
	}
	byID := map[int64]Booking{}
	for _, b := range live {
		byID[b.ID] = b
	}
	if len(ids) > 0 {
		held, err := p.Store.List(ctx, Filter{IDs: ids})
		if err != nil {
			return rep, fmt.Errorf("project bookings: %w", err)
		}
		for _, b := range held {
			byID[b.ID] = b
		}
	}
	stored, err := p.Store.Stored(ctx)
	if err != nil {
		return rep, fmt.Errorf("project bookings: %w", err)
	}
	maint, err := p.Store.Maintenance(ctx)
	if err != nil {
		return rep, fmt.Errorf("project bookings: %w", err)
	}
	bookings := slices.Collect(maps.Values(byID))
	slices.SortFunc(bookings, func(a, b Booking) int { return int(a.ID - b.ID) })
	plan := p.Settings.PlanProjection(bookings, inv, now, ProjectOptions{Stored: stored, AllowMassRemoval: p.AllowMassRemoval, Maintenance: maint})
	rep.KeptOrphans, rep.KeptWhy = plan.KeptOrphans, plan.KeptWhy
	if plan.KeptWhy != "" {
		p.log().Warn("orphan reservations kept", "why", plan.KeptWhy)
	}
	held := maps.Clone(plan.Seen)
	notes := map[int64]string{}
	noRoom := map[int64]bool{}
	moved := map[int64]bool{}
	var failures []error
	for _, a := range plan.Actions {
		res := ActionResult{Action: a, Outcome: OutcomeDone}
		if p.DryRun {
			res.Outcome = OutcomePlanned
			rep.Actions = append(rep.Actions, res)
			continue
		}
		err := p.apply(ctx, a, byID[a.Booking], held, notes, noRoom)
		switch {
		case err == nil:
			if a.Kind == ActRecreate && plan.Moving[a.Booking] != "" {
				moved[a.Booking] = true
			}
		case errors.Is(err, ErrInUse), errors.Is(err, ErrBusy):
			res.Outcome, res.Error = OutcomeWaiting, err.Error()
		default:
			res.Outcome, res.Error = OutcomeFailed, err.Error()
			failures = append(failures, fmt.Errorf("%s: %w", a, err))
			if a.Booking != 0 && notes[a.Booking] == "" {
				notes[a.Booking] = fmt.Sprintf("projection failed: %v", err)
			}
		}
		p.log().Info("reservation", "action", a.Kind, "name", a.Name, "booking", a.Booking, "why", a.Why, "outcome", res.Outcome, "error", res.Error)
		rep.Actions = append(rep.Actions, res)
	}
	p.readBackNodes(ctx, plan.Actions, held)
	var after []Booking
	for _, b := range bookings {
		h := held[b.ID]
		note := notes[b.ID]
		var state State
		switch {
		case b.Cancelled():
			state = StateCancelled
		case !now.Before(b.End):
			state = StateEnded
		case plan.Risks[b.ID] != "":
			state, note = StateAtRisk, joinNote(plan.Risks[b.ID], note)
		case plan.Moving[b.ID] != "" && !moved[b.ID]:
			state, note = StateAtRisk, joinNote(plan.Moving[b.ID], note)
		case h.IsZero() && !now.Before(b.Start):
			state = StateAtRisk
			if note == "" {
				note = "no Slurm reservation yet"
			}
		case h.IsZero():
			state = StateRequested
		case h.Count < b.Count && !now.Before(b.Start):
			state, note = StateAtRisk, joinNote(fmt.Sprintf("Slurm holds %d of %d", h.Count, b.Count), note)
		case !now.Before(b.Start):
			state = StateActive
		default:
			state = StateScheduled
		}
		if noRoom[b.ID] && state != StateAtRisk && !b.Cancelled() && !now.Before(b.Start) {
			state = StateAtRisk
		}
		if h.IsZero() && (state == StateEnded || state == StateCancelled) && len(b.Held.Nodes) > 0 {
			// Slurm's reservation is gone: keep where it was (the node
			// health credits of a drain during the window need it).
			h = Held{Nodes: b.Held.Nodes}
		}
		next := b
		next.State, next.Held, next.Note = state, h, note
		after = append(after, next)
		rep.States[next.StateAt(now)]++
		if state == StateAtRisk {
			rep.AtRisk = append(rep.AtRisk, next)
		}
		if b.State == state && heldSame(b.Held, h) && b.Note == note {
			continue
		}
		rep.Changed = append(rep.Changed, next)
		if p.DryRun {
			continue
		}
		if err := p.Store.Project(ctx, p.actor(), b.ID, state, h, note); err != nil {
			failures = append(failures, fmt.Errorf("record booking %d: %w", b.ID, err))
		}
	}
	rep.Now = p.Settings.resourcesNow(after, inv, maint, now)
	return rep, errors.Join(failures...)
}

// resourcesNow is every GPU type and node class of the pool at now, with
// the bookings as they stand after the run (inv is the cluster as read at
// its start, with the reservations it made accounted for by bookings).
func (s Settings) resourcesNow(bookings []Booking, inv Inventory, maint []Maintenance, now time.Time) []ResourceNow {
	var rs []Resource
	for _, t := range inv.Types() {
		rs = append(rs, GPU(t))
	}
	for _, c := range slices.Sorted(maps.Keys(s.NodeClasses)) {
		rs = append(rs, NodeClass(c))
	}
	var ids []int64
	for _, b := range bookings {
		ids = append(ids, b.ID)
	}
	adm := Admission{Settings: s, Inventory: inv, Maintenance: maint, Now: now}
	cals := adm.Calendars(rs, bookings, ids...)
	risk := map[Resource]int{}
	for _, b := range bookings {
		if b.StateAt(now) == StateAtRisk {
			risk[b.Resource()]++
		}
	}
	out := make([]ResourceNow, 0, len(rs))
	for _, r := range rs {
		capacity, booked := cals[r].At(now)
		_, name := r.Split()
		out = append(out, ResourceNow{Resource: r, Type: name, Capacity: capacity, Booked: booked, Free: max(capacity-booked, 0), AtRisk: risk[r]})
	}
	return out
}

func (p *Projector) actor() string {
	if p.Actor != "" {
		return p.Actor
	}
	return "gpubridge"
}

func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// readBackNodes reads the cluster once more when this run made
// reservations whose nodes Slurm picks (GPU bookings), and records where
// Slurm placed them: the node health credits count a booking's GPUs on a
// node from when its nodes are known. A failed read leaves them to the next
// projection.
func (p *Projector) readBackNodes(ctx context.Context, acts []Action, held map[int64]Held) {
	want := map[string]int64{} // reservation -> booking
	for _, a := range acts {
		if h, ok := held[a.Booking]; ok && (a.Kind == ActCreate || a.Kind == ActRecreate) && h.Reservation == a.Name && len(h.Nodes) == 0 {
			want[a.Name] = a.Booking
		}
	}
	if len(want) == 0 || p.DryRun {
		return
	}
	inv, err := p.Slurm.Inventory(ctx)
	if err != nil {
		p.log().Warn("reading back new reservations' nodes failed; the next projection reads them", "error", err)
		return
	}
	for _, r := range inv.Reservations {
		if id, ok := want[r.Name]; ok && len(r.Nodes) > 0 {
			h := held[id]
			h.Nodes = slices.Clone(r.Nodes)
			held[id] = h
		}
	}
}

func heldSame(a, b Held) bool {
	return a.Reservation == b.Reservation && a.Start.Equal(b.Start) && a.End.Equal(b.End) && a.Count == b.Count && slices.Equal(a.Nodes, b.Nodes)
}

func heldOf(sp ReservationSpec) Held {
	h := Held{Reservation: sp.Name, Start: sp.Start, End: sp.End, Count: sp.Count, Nodes: slices.Clone(sp.Nodes)}
	if len(sp.Nodes) > 0 {
		h.Count = len(sp.Nodes)
	}
	return h
}

// apply makes one action, updating what Slurm holds and the notes.
func (p *Projector) apply(ctx context.Context, a Action, b Booking, held map[int64]Held, notes map[int64]string, noRoom map[int64]bool) error {
	switch a.Kind {
	case ActRemoveOrphan:
		return p.Slurm.DeleteReservation(ctx, a.Name)
	case ActDelete:
		err := p.Slurm.DeleteReservation(ctx, a.Name)
		switch {
		case err == nil:
			delete(held, a.Booking)
		case errors.Is(err, ErrInUse):
			notes[a.Booking] = fmt.Sprintf("Slurm refused to delete reservation %s while jobs run inside it (error 2055); retried at the next projection, its GPUs stay held until then", a.Name)
		}
		return err
	case ActRecreate:
		old := held[a.Booking]
		err := p.Slurm.DeleteReservation(ctx, a.Name)
		if errors.Is(err, ErrInUse) {
			notes[a.Booking] = fmt.Sprintf("change waiting (%s): jobs run inside reservation %s and Slurm refuses to delete it (error 2055); the tenant keeps the %d it holds; retried at the next projection", a.Why, a.Name, old.Count)
			return err
		}
		if err != nil {
			return err
		}
		delete(held, a.Booking)
		if err := p.Slurm.CreateReservation(ctx, *a.Want); err != nil {
			// Put back what there was, so the tenant loses nothing it held.
			restore := ReservationSpec{Name: a.Name, Accounts: []string{b.Tenant}, Start: old.Start, End: old.End, Count: old.Count, Nodes: old.Nodes, Flags: []string{"IGNORE_JOBS"}}
			if b.Kind == KindGPU {
				restore.GPUType, restore.Nodes = b.GPUType, nil
			} else {
				restore.Count = 0
			}
			if restore.Count == 0 && len(restore.Nodes) == 0 {
				noRoom[a.Booking] = true
				notes[a.Booking] = fmt.Sprintf("reservation %s was deleted to change it (%s), Slurm refused the new one (%v), and the old one held nothing to put back; retried at the next projection", a.Name, a.Why, err)
				return err
			}
			if rerr := p.Slurm.CreateReservation(ctx, restore); rerr == nil {
				held[a.Booking] = heldOf(restore)
				notes[a.Booking] = fmt.Sprintf("change waiting (%s): Slurm refused the new reservation (%v); the old one was restored; retried at the next projection", a.Why, err)
			} else {
				notes[a.Booking] = fmt.Sprintf("reservation %s was deleted to change it (%s), and Slurm refused both the new one (%v) and the old one (%v)", a.Name, a.Why, err, rerr)
			}
			noRoom[a.Booking] = true
			return err
		}
		held[a.Booking] = heldOf(*a.Want)
		return nil
	case ActUpdate:
		if err := p.Slurm.UpdateReservation(ctx, *a.Want); err != nil {
			notes[a.Booking] = fmt.Sprintf("Slurm refused to update reservation %s (%s): %v; retried at the next projection", a.Name, a.Why, err)
			return err
		}
		h := held[a.Booking]
		if !a.Want.Start.IsZero() {
			h.Start = a.Want.Start
		}
		if !a.Want.End.IsZero() {
			h.End = a.Want.End
		}
		held[a.Booking] = h
		return nil
	case ActCreate:
		if b.Kind == KindNode && len(a.Want.Nodes) < b.Count {
			noRoom[a.Booking] = true
			notes[a.Booking] = fmt.Sprintf("only %d of %d node(s) of class %s are up and free for the window; retried at the next projection", len(a.Want.Nodes), b.Count, b.NodeClass)
			return fmt.Errorf("create reservation %s: %w: not enough free nodes of class %s", a.Name, ErrBusy, b.NodeClass)
		}
		if err := p.Slurm.CreateReservation(ctx, *a.Want); err != nil {
			if errors.Is(err, ErrBusy) {
				noRoom[a.Booking] = true
				notes[a.Booking] = fmt.Sprintf("Slurm has no room for reservation %s (%v); retried at the next projection", a.Name, err)
			}
			return err
		}
		held[a.Booking] = heldOf(*a.Want)
		return nil
	}
	return fmt.Errorf("unknown action %q", a.Kind)
}
