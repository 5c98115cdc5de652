package reserve

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// ActionKind is what the projector does to one reservation.
type ActionKind string

const (
	// ActCreate creates a booking's missing reservation.
	ActCreate ActionKind = "create"
	// ActUpdate fixes a reservation's accounts, start, end or flags in place.
	ActUpdate ActionKind = "update"
	// ActRecreate deletes and creates a reservation whose GPU count or
	// nodes differ (Slurm cannot change them), or that has OVERLAP set.
	// The delete is refused while jobs run inside; the reservation is then
	// kept (the tenant keeps what it holds) and the recreate retried.
	ActRecreate ActionKind = "recreate"
	// ActDelete deletes the reservation of a cancelled or ended booking.
	ActDelete ActionKind = "delete"
	// ActRemoveOrphan deletes a reservation named like gpubridge's whose
	// booking does not exist.
	ActRemoveOrphan ActionKind = "remove-orphan"
)

// Action is one change to one reservation.
type Action struct {
	Kind    ActionKind       `json:"kind"`
	Booking int64            `json:"booking,omitempty"`
	Name    string           `json:"reservation"`
	Want    *ReservationSpec `json:"want,omitempty"`
	// Why says what differs, e.g. "missing in Slurm", "end 12:00 -> 14:00".
	Why string `json:"why"`
}

func (a Action) String() string {
	s := fmt.Sprintf("%s reservation %s", a.Kind, a.Name)
	if a.Booking != 0 {
		s += fmt.Sprintf(" (booking %d)", a.Booking)
	}
	return s + ": " + a.Why
}

// Projection is the projector's plan: the actions, in order (removals
// first, so that the GPUs they free are there for the creations), and
// what it found about each booking.
type Projection struct {
	Actions []Action `json:"actions"`
	// Risks are bookings whose reservation sits on a node that is down
	// and cannot move (no healthy capacity of its kind is free), and why.
	Risks map[int64]string `json:"risks,omitempty"`
	// Moving are bookings whose reservation sits on a node that is down
	// and that a recreate action moves to healthy GPUs (or nodes), and why
	// they are at risk until it is done.
	Moving map[int64]string `json:"moving,omitempty"`
	// Seen is what Slurm holds now for each booking that has a reservation.
	Seen map[int64]Held `json:"-"`
	// KeptOrphans are orphans not removed because the removal looked
	// like a mass removal (see PlanProjection), and why.
	KeptOrphans []string `json:"keptOrphans,omitempty"`
	KeptWhy     string   `json:"keptWhy,omitempty"`
}

// harmfulFlags are reservation flags set out of band that change what a
// booking means, with the flag that clears each (OVERLAP has none: it is
// repaired by recreating the reservation).
var harmfulFlags = map[string]string{
	"MAGNETIC": "NO_MAGNETIC", "FLEX": "NO_FLEX", "MAINT": "NO_MAINT", "ANY_NODES": "NO_ANY_NODES",
	"DAILY": "NO_DAILY", "WEEKLY": "NO_WEEKLY", "WEEKDAY": "NO_WEEKDAY", "WEEKEND": "NO_WEEKEND", "HOURLY": "NO_HOURLY",
	"PURGE_COMP": "NO_PURGE_COMP",
}

// ProjectOptions tune PlanProjection.
type ProjectOptions struct {
	// Stored is how many bookings the store holds for the cluster, cancelled
	// and ended included.
	Stored int
	// AllowMassRemoval lets orphan removals through that the guard would
	// refuse (a person's flag; the daemon never sets it).
	AllowMassRemoval bool
	// Maintenance are the admin's maintenance windows: a booking moves off
	// a down node only where the healthy capacity, less maintenance, holds
	// it.
	Maintenance []Maintenance
}

// PlanProjection compares the bookings with gpubridge's reservations in
// Slurm and returns what to do. bookings are every booking that is not
// over (span end after now) and every booking whose reservation Slurm
// still shows.
//
// A booking is due once now is within Settings.LeadTime of its start, and
// stays so until it ends; a booking whose reservation exists is kept in
// step with it even before then (its start moved later). Orphans (a name
// Prefix+id with no booking) are removed, unless the store holds no
// booking at all, or more than one orphan makes more than half of
// gpubridge's reservations: that is what a wrong or empty database looks
// like, and nothing is removed then (KeptOrphans says so).
func (s Settings) PlanProjection(bookings []Booking, inv Inventory, now time.Time, opt ProjectOptions) Projection {
	pl := &planner{
		s: s, bookings: bookings, inv: inv, now: now, opt: opt, down: map[string]string{},
		p: Projection{Risks: map[int64]string{}, Moving: map[int64]string{}, Seen: map[int64]Held{}},
	}
	byID := map[int64]Booking{}
	for _, b := range bookings {
		byID[b.ID] = b
	}
	ours := map[int64]Reservation{}
	var orphans []string
	for _, r := range inv.Reservations {
		id, ok := s.BookingID(r.Name)
		if !ok {
			continue
		}
		if _, known := byID[id]; !known {
			orphans = append(orphans, r.Name)
			continue
		}
		ours[id] = r
	}
	for _, n := range inv.Nodes {
		if n.Down != "" {
			pl.down[n.Name] = n.Down
		}
	}
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		r, exists := ours[id]
		pl.booking(byID[id], r, exists)
	}
	removals := pl.orphans(orphans, len(ours))
	p := pl.p
	p.Actions = append(append(append(append(p.Actions, removals...), pl.deletes...), pl.updates...), pl.creates...)
	return p
}

// planner is PlanProjection's work in progress: its inputs, the down
// nodes (name -> why), the projection so far, and the actions by kind
// (deletions and recreations, updates, creations), in the order they run.
type planner struct {
	s        Settings
	bookings []Booking
	inv      Inventory
	now      time.Time
	opt      ProjectOptions
	down     map[string]string
	p        Projection

	deletes, updates, creates []Action
}

// booking plans booking b (with its reservation r when it exists): a
// cancelled or ended booking's reservation goes, a due one without a
// reservation gets one, and an existing reservation is kept in step.
func (pl *planner) booking(b Booking, r Reservation, exists bool) {
	s, now, id := pl.s, pl.now, b.ID
	name := s.ReservationName(id)
	if exists {
		pl.p.Seen[id] = s.seen(b, r)
	}
	if b.Cancelled() || !now.Before(b.End) {
		if exists && r.End.After(now) {
			why := "booking cancelled"
			if !b.Cancelled() {
				why = "booking ended at " + FormatTime(b.End, Zone{}, false)
			}
			pl.deletes = append(pl.deletes, Action{Kind: ActDelete, Booking: id, Name: name, Why: why})
		}
		return
	}
	due := !now.Before(b.Start.Add(-s.LeadTime))
	if !due && !exists {
		return
	}
	want := s.spec(b, r, exists, pl.inv, pl.bookings, pl.down)
	if !exists {
		pl.creates = append(pl.creates, Action{Kind: ActCreate, Booking: id, Name: name, Want: &want, Why: "missing in Slurm"})
		return
	}
	pl.keepInStep(b, r, want, name)
}

// keepInStep plans an existing reservation r of booking b (named name)
// toward want: at risk (a node under it down, or Slurm holding fewer
// GPUs) it moves or stays; a different shape is recreated; anything else
// that differs is updated in place.
func (pl *planner) keepInStep(b Booking, r Reservation, want ReservationSpec, name string) {
	s, id := pl.s, b.ID
	var bad, badNodes []string
	for _, n := range r.Nodes {
		if d, ok := pl.down[n]; ok {
			bad, badNodes = append(bad, n+" is "+d), append(badNodes, n)
		}
	}
	risk := ""
	if len(bad) > 0 {
		risk = "node under the reservation is down: " + strings.Join(bad, ", ")
	}
	why := s.shapeDiff(b, r)
	if why != "" && s.fewerGPUs(b, r) {
		// Slurm moves a GPU reservation off a node that goes down or
		// drains, to a node of the partition, without the GPUs it
		// cannot find there (26.05; shared/notes): it holds fewer.
		risk = joinNote(risk, fmt.Sprintf("Slurm holds %d of its %d %s (a node under it went down or drained, or it was changed)", r.GPUs[b.GPUType], b.Count, b.GPUType))
	}
	if risk != "" && pl.atRisk(b, r, want, name, risk, why, bad, badNodes) {
		return
	}
	if why != "" {
		pl.deletes = append(pl.deletes, Action{Kind: ActRecreate, Booking: id, Name: name, Want: &want, Why: why})
		return
	}
	if upd, why := updateFor(want, r, pl.now); why != "" {
		pl.updates = append(pl.updates, Action{Kind: ActUpdate, Booking: id, Name: name, Want: &upd, Why: why})
	}
}

// atRisk plans a reservation r at risk (why: risk; its shape differs by
// why; bad are its down nodes, badNodes their names): recreated where the
// healthy capacity holds it for the rest of its window (Moving), else kept
// as it is (Risks). It reports whether the booking's plan is complete.
func (pl *planner) atRisk(b Booking, r Reservation, want ReservationSpec, name, risk, why string, bad, badNodes []string) bool {
	s, id := pl.s, b.ID
	if short := s.moveRoom(b, pl.bookings, pl.inv, pl.opt.Maintenance, pl.now); short != "" {
		pl.p.Risks[id] = risk + "; " + short
		if why == "" || s.fewerGPUs(b, r) {
			if upd, uwhy := updateFor(want, r, pl.now); uwhy != "" {
				pl.updates = append(pl.updates, Action{Kind: ActUpdate, Booking: id, Name: name, Want: &upd, Why: uwhy})
			}
			return true // what Slurm holds is kept: there is nowhere better
		}
		return false
	}
	pl.p.Moving[id] = risk
	if why == "" {
		why = "move off " + strings.Join(badNodes, ",") + " (" + strings.Join(bad, ", ") + ")"
	}
	pl.deletes = append(pl.deletes, Action{Kind: ActRecreate, Booking: id, Name: name, Want: &want, Why: why})
	return true
}

// orphans are the removals of the orphan reservations (ours counts the
// reservations that have a booking), unless removing them looks like a
// wrong or empty database: then they are kept, and the projection says
// why.
func (pl *planner) orphans(orphans []string, ours int) []Action {
	slices.Sort(orphans)
	opt := pl.opt
	var removals []Action
	switch {
	case len(orphans) == 0:
	case !opt.AllowMassRemoval && opt.Stored == 0:
		pl.p.KeptOrphans = orphans
		pl.p.KeptWhy = fmt.Sprintf("the booking store holds no booking, yet Slurm has %d gpubridge reservation(s): is this the right database? Nothing was removed; `gpubridge project --allow-mass-delete` removes them", len(orphans))
	case !opt.AllowMassRemoval && len(orphans) > 1 && 2*len(orphans) > len(orphans)+ours:
		pl.p.KeptOrphans = orphans
		pl.p.KeptWhy = fmt.Sprintf("%d of %d gpubridge reservations have no booking: is the database stale or another site's? Nothing was removed; `gpubridge project --allow-mass-delete` removes them", len(orphans), len(orphans)+ours)
	default:
		for _, n := range orphans {
			removals = append(removals, Action{Kind: ActRemoveOrphan, Name: n, Why: "no booking " + strings.TrimPrefix(n, pl.s.Prefix)})
		}
	}
	return removals
}

// spec is the reservation b wants. For a node booking that has none yet
// (or whose nodes are down), it keeps the nodes it has that are up and
// picks the rest from the nodes of the class that are up and not held by
// another reservation in the window.
func (s Settings) spec(b Booking, r Reservation, exists bool, inv Inventory, bookings []Booking, down map[string]string) ReservationSpec {
	sp := ReservationSpec{Name: s.ReservationName(b.ID), Accounts: []string{b.Tenant}, Start: b.Start, End: b.End, Flags: []string{"IGNORE_JOBS"}}
	if b.Kind == KindGPU {
		sp.GPUType, sp.Count = b.GPUType, b.Count
		return sp
	}
	healthy := exists && !slices.ContainsFunc(r.Nodes, func(n string) bool { return down[n] != "" })
	if exists && len(r.Nodes) == b.Count && healthy {
		sp.Nodes = slices.Clone(r.Nodes)
		return sp
	}
	busy := map[string]bool{}
	for _, o := range inv.Reservations {
		if o.Name == sp.Name || !o.Start.Before(b.End) || !o.End.After(b.Start) {
			continue
		}
		for _, n := range o.Nodes {
			busy[n] = true
		}
	}
	for _, o := range bookings {
		if o.ID == b.ID || o.Held.IsZero() || !o.Held.Start.Before(b.End) || !o.Held.End.After(b.Start) {
			continue
		}
		for _, n := range o.Held.Nodes {
			busy[n] = true
		}
	}
	class := s.classNodes(inv, b.NodeClass)
	if exists {
		for _, n := range class {
			if len(sp.Nodes) < b.Count && slices.Contains(r.Nodes, n.Name) && n.Down == "" {
				sp.Nodes = append(sp.Nodes, n.Name)
			}
		}
	}
	for _, n := range class {
		if len(sp.Nodes) == b.Count {
			break
		}
		if n.Down == "" && !busy[n.Name] && !slices.Contains(sp.Nodes, n.Name) {
			sp.Nodes = append(sp.Nodes, n.Name)
		}
	}
	slices.Sort(sp.Nodes)
	return sp
}

// fewerGPUs reports whether r differs from GPU booking b only in holding
// fewer of its GPUs (no other type, no OVERLAP). A reservation of b's with
// no GPUs left reads as whole nodes (cores only); it counts as fewer unless
// it names its nodes (SPEC_NODES: made so by hand).
func (s Settings) fewerGPUs(b Booking, r Reservation) bool {
	if b.Kind != KindGPU || slices.Contains(r.Flags, "OVERLAP") || r.GPUs[b.GPUType] >= b.Count {
		return false
	}
	if r.WholeNodes && (r.UntypedGPUs > 0 || slices.Contains(r.Flags, "SPEC_NODES")) {
		return false
	}
	for t, c := range r.GPUs {
		if t != b.GPUType && c > 0 {
			return false
		}
	}
	return true
}

// moveRoom says why b cannot move off its down nodes: the capacity that
// is healthy now (down nodes count as down from now on) less maintenance
// and every other booking does not hold it for the rest of its window;
// "" when it does. The ledger decides, not Slurm's present state, so that
// a move never takes GPUs promised to another booking.
func (s Settings) moveRoom(b Booking, bookings []Booking, inv Inventory, maint []Maintenance, now time.Time) string {
	probe := b
	probe.Held = Held{}
	if probe.Start.Before(now) {
		probe.Start = now.Truncate(time.Second)
	}
	if !probe.End.After(probe.Start) {
		return "its window is over"
	}
	ref := Admission{Settings: s, Inventory: inv, Maintenance: maint, Now: now}.Check(probe, bookings)
	if ref == nil {
		return ""
	}
	sh := ref.Shortfalls[0]
	return fmt.Sprintf("cannot move: %d healthy %s free from %s, it needs %d; it stays where it is",
		max(sh.Capacity-sh.Committed, 0), sh.Resource.Unit(), FormatTime(sh.From, Zone{}, false), sh.Asked)
}

// seen is what a reservation holds, as Held.
func (s Settings) seen(b Booking, r Reservation) Held {
	h := Held{Reservation: r.Name, Start: r.Start, End: r.End, Nodes: slices.Clone(r.Nodes)}
	if b.Kind == KindNode {
		h.Count = len(r.Nodes)
	} else {
		h.Count = r.GPUs[b.GPUType]
		if len(r.GPUs) == 0 {
			h.Count = r.UntypedGPUs
		}
	}
	return h
}

// shapeDiff says why a reservation must be recreated: its GPUs or nodes
// differ from the booking's, or OVERLAP was set.
func (s Settings) shapeDiff(b Booking, r Reservation) string {
	if slices.Contains(r.Flags, "OVERLAP") {
		return "OVERLAP is set (it turns off Slurm's double-booking check)"
	}
	if b.Kind == KindNode {
		if !r.WholeNodes || len(r.Nodes) != b.Count {
			return fmt.Sprintf("holds nodes %s; booking %d has %d whole node(s) of class %s", orDash(strings.Join(r.Nodes, ",")), b.ID, b.Count, b.NodeClass)
		}
		for _, n := range r.Nodes {
			if !slices.Contains(s.NodeClasses[b.NodeClass], n) {
				return fmt.Sprintf("holds node %s, which is not of class %s", n, b.NodeClass)
			}
		}
		return ""
	}
	var other []string
	for t, c := range r.GPUs {
		if t != b.GPUType && c > 0 {
			other = append(other, fmt.Sprintf("%s=%d", t, c))
		}
	}
	slices.Sort(other)
	switch {
	case r.GPUs[b.GPUType] != b.Count || len(other) > 0:
		have := fmt.Sprintf("%s=%d", b.GPUType, r.GPUs[b.GPUType])
		if len(other) > 0 {
			have += "," + strings.Join(other, ",")
		}
		return fmt.Sprintf("TRES gres/gpu:%s -> %s=%d", have, b.GPUType, b.Count)
	case r.WholeNodes:
		return "holds whole nodes; booking " + fmt.Sprint(b.ID) + " is for GPUs"
	}
	return ""
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// updateFor returns the in-place update that makes r match want, and what
// it changes ("" when nothing).
func updateFor(want ReservationSpec, r Reservation, now time.Time) (ReservationSpec, string) {
	upd := ReservationSpec{Name: want.Name}
	var why []string
	if !slices.Equal(sortedCopy(r.Accounts), sortedCopy(want.Accounts)) {
		upd.Accounts = want.Accounts
		why = append(why, fmt.Sprintf("accounts %s -> %s", orDash(strings.Join(r.Accounts, ",")), strings.Join(want.Accounts, ",")))
	}
	// A start that has passed on both sides is what it is; one in the
	// future is moved.
	startPassed := !now.Before(r.Start) && !now.Before(want.Start)
	if !r.Start.Equal(want.Start) && !startPassed {
		upd.Start = want.Start
		if upd.Start.Before(now) {
			upd.Start = now.Truncate(time.Second)
		}
		if !upd.Start.Equal(r.Start) {
			why = append(why, fmt.Sprintf("start %s -> %s", FormatTime(r.Start, Zone{}, false), FormatTime(upd.Start, Zone{}, false)))
		} else {
			upd.Start = time.Time{}
		}
	}
	if !r.End.Equal(want.End) {
		upd.End = want.End
		why = append(why, fmt.Sprintf("end %s -> %s", FormatTime(r.End, Zone{}, false), FormatTime(want.End, Zone{}, false)))
	}
	var flags []string
	if !slices.Contains(r.Flags, "IGNORE_JOBS") {
		why = append(why, "IGNORE_JOBS missing")
	}
	for _, f := range r.Flags {
		if fix, bad := harmfulFlags[f]; bad {
			flags = append(flags, fix)
			why = append(why, f+" set")
		}
	}
	if len(why) == 0 {
		return ReservationSpec{}, ""
	}
	// Every update sends IGNORE_JOBS: without it Slurm refuses any update
	// while other jobs run on the nodes (flags are added, never replaced).
	upd.Flags = append([]string{"IGNORE_JOBS"}, flags...)
	return upd, strings.Join(why, "; ")
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
