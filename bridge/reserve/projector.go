package reserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
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
	AtRisk []Booking `json:"atRisk,omitempty"`
	// Unprojected are the bookings Slurm has no room for after this run
	// (also at risk, with why): what the ledger admitted and Slurm does
	// not hold.
	Unprojected []int64  `json:"unprojected,omitempty"`
	KeptOrphans []string `json:"keptOrphans,omitempty"`
	KeptWhy     string   `json:"keptWhy,omitempty"`
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
	in, err := p.read(ctx, now)
	if err != nil {
		return rep, err
	}
	plan := p.Settings.PlanProjection(in.bookings, in.inv, now, ProjectOptions{Stored: in.stored, AllowMassRemoval: p.AllowMassRemoval, Maintenance: in.maint})
	rep.KeptOrphans, rep.KeptWhy = plan.KeptOrphans, plan.KeptWhy
	if plan.KeptWhy != "" {
		p.log().Warn("orphan reservations kept", "why", plan.KeptWhy)
	}
	run := &projectRun{
		rep: rep, held: maps.Clone(plan.Seen),
		notes: map[int64]string{}, noRoom: map[int64]bool{}, moved: map[int64]bool{},
	}
	for _, a := range plan.Actions {
		p.act(ctx, run, a, in.byID[a.Booking], plan)
	}
	run.rep.Actions = append(run.rep.Actions, p.makeRoom(ctx, now, in.bookings, in.maint, run.held, run.notes, run.noRoom)...)
	acts := make([]Action, 0, len(run.rep.Actions))
	for _, r := range run.rep.Actions {
		acts = append(acts, r.Action)
	}
	p.readBackNodes(ctx, acts, run.held)
	var after []Booking
	for _, b := range in.bookings {
		after = append(after, p.record(ctx, run, b, plan, now))
	}
	run.rep.Now = p.Settings.resourcesNow(after, in.inv, in.maint, now)
	return run.rep, errors.Join(run.failures...)
}

// projectInput is what a projection reads: the cluster, the bookings it
// looks at (live ones, and those Slurm holds a reservation for; by ID and
// in ID order), how many the store holds, and the maintenance windows.
type projectInput struct {
	inv      Inventory
	byID     map[int64]Booking
	bookings []Booking
	stored   int
	maint    []Maintenance
}

// read reads the cluster and the store for a projection at now.
func (p *Projector) read(ctx context.Context, now time.Time) (projectInput, error) {
	var in projectInput
	inv, err := p.Slurm.Inventory(ctx)
	if err != nil {
		return in, fmt.Errorf("project bookings: read the cluster: %w", err)
	}
	in.inv = inv
	var ids []int64
	for _, r := range inv.Reservations {
		if id, ok := p.Settings.BookingID(r.Name); ok {
			ids = append(ids, id)
		}
	}
	if in.byID, err = p.bookingsByID(ctx, now, ids); err != nil {
		return in, fmt.Errorf("project bookings: %w", err)
	}
	if in.stored, err = p.Store.Stored(ctx); err != nil {
		return in, fmt.Errorf("project bookings: %w", err)
	}
	if in.maint, err = p.Store.Maintenance(ctx); err != nil {
		return in, fmt.Errorf("project bookings: %w", err)
	}
	in.bookings = slices.Collect(maps.Values(in.byID))
	slices.SortFunc(in.bookings, func(a, b Booking) int { return int(a.ID - b.ID) })
	return in, nil
}

// bookingsByID are the bookings live at now, and those with the given IDs
// (their reservations are in Slurm), by ID.
func (p *Projector) bookingsByID(ctx context.Context, now time.Time, ids []int64) (map[int64]Booking, error) {
	live, err := p.Store.List(ctx, Filter{From: now})
	if err != nil {
		return nil, err
	}
	byID := map[int64]Booking{}
	for _, b := range live {
		byID[b.ID] = b
	}
	if len(ids) > 0 {
		held, err := p.Store.List(ctx, Filter{IDs: ids})
		if err != nil {
			return nil, err
		}
		for _, b := range held {
			byID[b.ID] = b
		}
	}
	return byID, nil
}

// projectRun is one projection's work in progress: its report, what Slurm
// holds per booking, why a booking waits or failed (notes), the bookings
// Slurm has no room for, those moved off a down node, and the failures.
type projectRun struct {
	rep      Report
	held     map[int64]Held
	notes    map[int64]string
	noRoom   map[int64]bool
	moved    map[int64]bool
	failures []error
}

// act makes one planned action a (on booking b) and reports it: Slurm
// refusing for now (jobs inside, busy) leaves it waiting, any other error
// fails it and notes why on the booking. A dry run only plans.
func (p *Projector) act(ctx context.Context, run *projectRun, a Action, b Booking, plan Projection) {
	res := ActionResult{Action: a, Outcome: OutcomeDone}
	if p.DryRun {
		res.Outcome = OutcomePlanned
		run.rep.Actions = append(run.rep.Actions, res)
		return
	}
	err := p.apply(ctx, a, b, run.held, run.notes, run.noRoom)
	switch {
	case err == nil:
		if a.Kind == ActRecreate && plan.Moving[a.Booking] != "" {
			run.moved[a.Booking] = true
		}
	case errors.Is(err, ErrInUse), errors.Is(err, ErrBusy):
		res.Outcome, res.Error = OutcomeWaiting, err.Error()
	default:
		res.Outcome, res.Error = OutcomeFailed, err.Error()
		run.failures = append(run.failures, fmt.Errorf("%s: %w", a, err))
		if a.Booking != 0 && run.notes[a.Booking] == "" {
			run.notes[a.Booking] = fmt.Sprintf("projection failed: %v", err)
		}
	}
	p.log().Info("reservation", "action", a.Kind, "name", a.Name, "booking", a.Booking, "why", a.Why, "outcome", res.Outcome, "error", res.Error)
	run.rep.Actions = append(run.rep.Actions, res)
}

// record is booking b as it stands after the run: its state, what Slurm
// holds for it and why it waits or is at risk, counted in the report and
// written to the store when it changed (not in a dry run).
func (p *Projector) record(ctx context.Context, run *projectRun, b Booking, plan Projection, now time.Time) Booking {
	h := run.held[b.ID]
	state, note := bookingState(b, h, run.notes[b.ID], plan, run.moved[b.ID], now)
	unplaced := run.noRoom[b.ID] && !b.Cancelled() && now.Before(b.End)
	if unplaced && state != StateAtRisk {
		// Reported at once, not at its start: the tenant and the
		// admin have until then to act.
		state = StateAtRisk
	}
	if unplaced {
		run.rep.Unprojected = append(run.rep.Unprojected, b.ID)
	}
	if h.IsZero() && (state == StateEnded || state == StateCancelled) && len(b.Held.Nodes) > 0 {
		// Slurm's reservation is gone: keep where it was (the node
		// health credits of a drain during the window need it).
		h = Held{Nodes: b.Held.Nodes}
	}
	next := b
	next.State, next.Held, next.Note = state, h, note
	run.rep.States[next.StateAt(now)]++
	if state == StateAtRisk {
		run.rep.AtRisk = append(run.rep.AtRisk, next)
	}
	if b.State == state && heldSame(b.Held, h) && b.Note == note {
		return next
	}
	run.rep.Changed = append(run.rep.Changed, next)
	if p.DryRun {
		return next
	}
	if err := p.Store.Project(ctx, p.actor(), b.ID, state, h, note); err != nil {
		run.failures = append(run.failures, fmt.Errorf("record booking %d: %w", b.ID, err))
	}
	return next
}

// bookingState is the state of booking b at now, given what Slurm holds
// for it (h), the run's note on it, the plan's risks and moves, and
// whether its move was made; the note says why it waits or is at risk.
func bookingState(b Booking, h Held, note string, plan Projection, moved bool, now time.Time) (State, string) {
	switch {
	case b.Cancelled():
		return StateCancelled, note
	case !now.Before(b.End):
		return StateEnded, note
	case plan.Risks[b.ID] != "":
		return StateAtRisk, joinNote(plan.Risks[b.ID], note)
	case plan.Moving[b.ID] != "" && !moved:
		return StateAtRisk, joinNote(plan.Moving[b.ID], note)
	case h.IsZero() && !now.Before(b.Start):
		if note == "" {
			note = "no Slurm reservation yet"
		}
		return StateAtRisk, note
	case h.IsZero():
		return StateRequested, note
	case h.Count < b.Count && !now.Before(b.Start):
		return StateAtRisk, joinNote(fmt.Sprintf("Slurm holds %d of %d", h.Count, b.Count), note)
	case !now.Before(b.Start):
		return StateActive, note
	}
	return StateScheduled, note
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
	if len(sp.Nodes) > 0 && sp.GPUType == "" {
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

// makeRoom runs after the plan's actions. For each GPU type where Slurm
// had no room for a booking's new reservation although the ledger admitted
// it, the cause is fragments: each reservation holds particular GPUs of a
// node for its whole window (see Place). If the placement model holds the
// blocked bookings once the reservations that have not started move, those
// are deleted and all of them created anew in order of start, which makes
// Slurm's own choice of GPUs (the lowest free for the whole window, on the
// model's node) land where the model says. Started reservations never move.
func (p *Projector) makeRoom(ctx context.Context, now time.Time, bookings []Booking, maint []Maintenance, held map[int64]Held, notes map[int64]string, noRoom map[int64]bool) []ActionResult {
	blocked := map[string][]Booking{}
	for _, b := range bookings {
		if noRoom[b.ID] && b.Kind == KindGPU && held[b.ID].IsZero() && !b.Cancelled() && now.Before(b.End) {
			blocked[b.GPUType] = append(blocked[b.GPUType], b)
		}
	}
	if len(blocked) == 0 || p.DryRun {
		return nil
	}
	inv, err := p.Slurm.Inventory(ctx)
	if err != nil {
		p.log().Warn("reading the cluster to make room failed; retried at the next projection", "error", err)
		return nil
	}
	var out []ActionResult
	for _, t := range slices.Sorted(maps.Keys(blocked)) {
		out = append(out, p.roomFor(ctx, now, t, blocked[t], bookings, inv, maint, held, notes, noRoom)...)
	}
	return out
}

// roomFor makes room for the blocked bookings of one GPU type (makeRoom).
func (p *Projector) roomFor(ctx context.Context, now time.Time, typ string, blocked, bookings []Booking, inv Inventory, maint []Maintenance, held map[int64]Held, notes map[int64]string, noRoom map[int64]bool) []ActionResult {
	where := map[string][]string{}
	for _, r := range inv.Reservations {
		where[r.Name] = r.Nodes
	}
	cur := make([]Booking, 0, len(bookings))
	for _, b := range bookings {
		b.Held = held[b.ID]
		if !b.Held.IsZero() {
			b.Held.Nodes = slices.Clone(where[b.Held.Reservation])
		}
		cur = append(cur, b)
	}
	move := p.Settings.movable(cur, blocked, typ, now)
	var ids []int64
	fixed := map[int64]bool{}
	for i, b := range cur {
		ids = append(ids, b.ID)
		if move[b.ID] || slices.ContainsFunc(blocked, func(x Booking) bool { return x.ID == b.ID }) {
			cur[i].Held = Held{}
		} else if !b.Held.IsZero() {
			fixed[b.ID] = true
		}
	}
	nodes, items := p.Settings.PlaceItems(cur, inv, maint, now, []string{typ}, Admission{}.accountedSet(cur, ids...))
	for i, it := range items {
		if fixed[it.Booking] && len(it.Nodes) > 0 {
			items[i].Must, items[i].Nodes = true, it.Nodes[:1]
		}
	}
	plan := Place(nodes, items)
	if len(plan.Unplaced) > 0 {
		for _, b := range blocked {
			if slices.Contains(plan.Unplaced, b.ID) {
				notes[b.ID] = joinNote(fmt.Sprintf("no placement of the bookings on the nodes' %s GPUs holds it, even with the reservations that have not started moved: gpubridge cannot project it; cancel or change it, or free GPUs", typ), notes[b.ID])
			}
		}
		return nil
	}
	return p.moveAndCreate(ctx, typ, blocked, cur, move, plan, inv.spreads([]string{typ}), held, notes, noRoom)
}

// movable are the bookings of typ whose reservations have not started and
// whose windows overlap, directly or through each other, the blocked ones'.
func (s Settings) movable(cur, blocked []Booking, typ string, now time.Time) map[int64]bool {
	type win struct{ s, e time.Time }
	var wins []win
	for _, b := range blocked {
		wins = append(wins, win{b.Start, b.End})
	}
	move := map[int64]bool{}
	for grew := true; grew; {
		grew = false
		for _, b := range cur {
			h := b.Held
			if move[b.ID] || b.Kind != KindGPU || b.GPUType != typ || h.IsZero() || !now.Before(h.Start) || b.Cancelled() {
				continue
			}
			if slices.ContainsFunc(wins, func(w win) bool { return h.Start.Before(w.e) && w.s.Before(h.End) }) {
				move[b.ID] = true
				wins = append(wins, win{h.Start, h.End})
				grew = true
			}
		}
	}
	return move
}

// moveAndCreate deletes the movable reservations and creates them and the
// blocked ones in the placement's order (by start), each on the model's
// node when the type is on several nodes.
func (p *Projector) moveAndCreate(ctx context.Context, typ string, blocked, cur []Booking, move map[int64]bool, plan PlaceResult, pin bool, held map[int64]Held, notes map[int64]string, noRoom map[int64]bool) []ActionResult {
	byID := map[int64]Booking{}
	for _, b := range cur {
		byID[b.ID] = b
	}
	var out []ActionResult
	var blockedIDs []string
	for _, b := range blocked {
		blockedIDs = append(blockedIDs, fmt.Sprint(b.ID))
	}
	for _, id := range slices.Sorted(maps.Keys(move)) {
		name := p.Settings.ReservationName(id)
		if err := p.Slurm.DeleteReservation(ctx, name); err != nil {
			// Nothing else moves; what was deleted is created below.
			out = append(out, ActionResult{Action: Action{Kind: ActRecreate, Booking: id, Name: name, Why: "move to make room"}, Outcome: OutcomeFailed, Error: err.Error()})
			p.log().Warn("moving a reservation to make room failed", "name", name, "error", err)
			delete(move, id)
			continue
		}
		delete(held, id)
	}
	for _, pl := range plan.Placed {
		b, ok := byID[pl.Booking]
		if !ok || (!move[b.ID] && !slices.ContainsFunc(blocked, func(x Booking) bool { return x.ID == b.ID })) {
			continue
		}
		want := ReservationSpec{Name: p.Settings.ReservationName(b.ID), Accounts: []string{b.Tenant}, Start: b.Start, End: b.End, GPUType: typ, Count: b.Count, Flags: []string{"IGNORE_JOBS"}}
		if pin {
			want.Nodes = []string{pl.Node}
		}
		a := Action{Kind: ActCreate, Booking: b.ID, Name: want.Name, Want: &want,
			Why: fmt.Sprintf("missing in Slurm; room made on %s %s GPUs %s by moving reservations that have not started", pl.Node, typ, intList(pl.GPUs))}
		if move[b.ID] {
			a.Kind = ActRecreate
			a.Why = fmt.Sprintf("moved to %s %s GPUs %s to make room for booking(s) %s (GPUs fragmented)", pl.Node, typ, intList(pl.GPUs), strings.Join(blockedIDs, ","))
		}
		res := ActionResult{Action: a, Outcome: OutcomeDone}
		if err := p.Slurm.CreateReservation(ctx, want); err != nil {
			res.Outcome, res.Error = OutcomeWaiting, err.Error()
			noRoom[b.ID] = true
			notes[b.ID] = fmt.Sprintf("Slurm has no room for reservation %s although the placement model has (%v); retried at the next projection", want.Name, err)
		} else {
			held[b.ID] = heldOf(want)
			delete(noRoom, b.ID)
			delete(notes, b.ID)
		}
		p.log().Info("reservation", "action", a.Kind, "name", a.Name, "booking", a.Booking, "why", a.Why, "outcome", res.Outcome, "error", res.Error)
		out = append(out, res)
	}
	return out
}

func intList(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ",")
}
