package reserve

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// ErrNoCapacity is matched (errors.Is) by *Refusal: the booking does not
// fit, and nothing was changed.
var ErrNoCapacity = errors.New("not enough capacity")

// Admission is what admission decides on: the installation's settings, the
// cluster, the maintenance windows and the time.
type Admission struct {
	Settings    Settings
	Inventory   Inventory
	Maintenance []Maintenance
	Now         time.Time
}

// Capacities is Settings.Capacities of the admission's cluster, with the
// reservations of the given bookings accounted for by them.
func (a Admission) Capacities(bookings []Booking, also ...int64) map[Resource]Capacity {
	// Only gpubridge's reservations need looking up: usually a few.
	known := map[int64]bool{}
	for _, r := range a.Inventory.Reservations {
		if id, ok := a.Settings.BookingID(r.Name); ok {
			known[id] = false
		}
	}
	if len(known) > 0 {
		for _, b := range bookings {
			if _, ours := known[b.ID]; ours {
				known[b.ID] = true
			}
		}
		for _, id := range also {
			known[id] = true
		}
	}
	return a.Settings.Capacities(a.Inventory, a.Maintenance, a.Now, func(id int64) bool { return known[id] })
}

// Calendars builds the calendars of rs from the bookings (each counted
// through Settings.Commitments); also names further bookings whose
// reservations are accounted for elsewhere (the one being admitted).
func (a Admission) Calendars(rs []Resource, bookings []Booking, also ...int64) map[Resource]*Calendar {
	return a.calendars(a.Capacities(bookings, also...), rs, bookings)
}

func (a Admission) calendars(caps map[Resource]Capacity, rs []Resource, bookings []Booking) map[Resource]*Calendar {
	byRes := make(map[Resource][]Commitment, len(rs))
	for _, r := range rs {
		byRes[r] = nil
	}
	var buf []Commitment
	for _, b := range bookings {
		buf = a.Settings.AppendCommitments(buf[:0], b, a.Inventory)
		for _, c := range buf {
			if cs, ok := byRes[c.Resource]; ok {
				byRes[c.Resource] = append(cs, c)
			}
		}
	}
	out := make(map[Resource]*Calendar, len(rs))
	for _, r := range rs {
		c, ok := caps[r]
		if !ok {
			c = Capacity{Resource: r}
		}
		out[r] = NewCalendar(c, byRes[r])
	}
	return out
}

// Shortfall is an interval in which a booking does not fit one resource.
type Shortfall struct {
	Resource  Resource  `json:"resource"`
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
	Capacity  int       `json:"capacity"`
	Committed int       `json:"committed"` // by the other bookings
	Asked     int       `json:"asked"`
	Short     int       `json:"short"`
	// OwnCommitted of Committed is the same tenant's.
	OwnCommitted int `json:"ownCommitted"`
	// Reasons capacity is below the pool's size in the interval.
	Reasons []string `json:"reasons,omitempty"`
	// Fragmented: the pool has the GPUs at every instant, but no
	// placement of the bookings on nodes' GPUs holds this one for its
	// whole window (Reasons say where the most are free); Short is what
	// the best node lacks.
	Fragmented bool `json:"fragmented,omitempty"`
}

// OtherTenants is what other tenants' conflicting bookings are shown as: a
// count, never who or what for.
type OtherTenants struct {
	Resource Resource `json:"resource"`
	Bookings int      `json:"bookings"`
	// Most is the most the other tenants hold at once in the shortfall.
	Most int `json:"most"`
}

// Refusal is a booking that does not fit: where, by how much, the
// conflicts, and the next windows of the same shape that fit.
type Refusal struct {
	Booking    Booking        `json:"booking"`
	Shortfalls []Shortfall    `json:"shortfalls"`
	Own        []Booking      `json:"ownConflicts,omitempty"`
	Others     []OtherTenants `json:"otherTenants,omitempty"`
	Next       []Slot         `json:"nextAvailable,omitempty"`
	// NextSearched is how far ahead the next window was looked for.
	NextSearched time.Time `json:"nextSearchedUntil,omitzero"`
}

// Is makes errors.Is(err, ErrNoCapacity) true.
func (r *Refusal) Is(target error) bool { return target == ErrNoCapacity }

func (r *Refusal) Error() string {
	var b strings.Builder
	bk := r.Booking
	fmt.Fprintf(&b, "booking refused, nothing was changed: %s for tenant %s over %s does not fit", bk.What(), bk.Tenant, Window(bk.Start, bk.End))
	for _, s := range r.Shortfalls {
		if s.Fragmented {
			fmt.Fprintf(&b, "\n  no node holds %d %s for the whole window from %s to %s (%d of %d free in the pool at every instant, but not on one node's same GPUs; %s)",
				s.Asked, s.Resource.Unit(), FormatTime(s.From, Zone{}, false), FormatTime(s.To, Zone{}, false), max(s.Capacity-s.Committed, 0), s.Capacity, strings.Join(s.Reasons, "; "))
			continue
		}
		fmt.Fprintf(&b, "\n  short %d %s from %s to %s: %d free of %d (booked %d",
			s.Short, s.Resource.Unit(), FormatTime(s.From, Zone{}, false), FormatTime(s.To, Zone{}, false), max(s.Capacity-s.Committed, 0), s.Capacity, s.Committed)
		if s.OwnCommitted > 0 {
			fmt.Fprintf(&b, ", %d of them by %s", s.OwnCommitted, bk.Tenant)
		}
		fmt.Fprintf(&b, "; asked %d)", s.Asked)
		if len(s.Reasons) > 0 {
			fmt.Fprintf(&b, "; capacity reduced by: %s", strings.Join(s.Reasons, "; "))
		}
	}
	for _, o := range r.Own {
		fmt.Fprintf(&b, "\n  conflicts with %s", o.Summary())
	}
	for _, o := range r.Others {
		fmt.Fprintf(&b, "\n  conflicts with %d booking(s) of other tenants (holding up to %d %s at once there)", o.Bookings, o.Most, o.Resource.Unit())
	}
	switch {
	case len(r.Next) > 0:
		n := r.Next[0]
		fmt.Fprintf(&b, "\n  next available: %s (%s for %s, until %s", FormatTime(n.Start, Zone{}, false), bk.What(), FormatDuration(bk.Duration()), FormatTime(n.End, Zone{}, false))
		if !n.Latest.IsZero() && n.Latest.After(n.Start) {
			fmt.Fprintf(&b, "; any start up to %s fits", FormatTime(n.Latest, Zone{}, false))
		}
		b.WriteString(")")
	case !r.NextSearched.IsZero():
		fmt.Fprintf(&b, "\n  next available: none with this shape before %s", FormatTime(r.NextSearched, Zone{}, false))
	}
	return b.String()
}

// Check decides whether b fits on top of others (every booking that may
// overlap it, of every tenant, without b's own stored row). It returns nil
// when b fits at every instant on every resource it takes, else a Refusal
// without Next (see NextWindows).
func (a Admission) Check(b Booking, others []Booking) *Refusal {
	mine := a.Settings.Commitments(b, a.Inventory)
	rs := a.Settings.Resources(b, a.Inventory)
	var rest []Booking
	for _, o := range others {
		if b.ID == 0 || o.ID != b.ID {
			rest = append(rest, o)
		}
	}
	cals := a.Calendars(rs, rest, b.ID)
	caps := a.Capacities(rest, b.ID)
	ref := &Refusal{Booking: b}
	byID := map[int64]Booking{}
	for _, o := range rest {
		byID[o.ID] = o
	}
	ownSeen := map[int64]bool{}
	for _, r := range rs {
		cal := cals[r]
		otherIDs := map[int64]bool{}
		most := 0
		for _, m := range mine {
			if m.Resource != r {
				continue
			}
			for _, seg := range cal.Segments(fromUnix(m.Start), fromUnix(m.End)) {
				free := seg.Capacity - seg.Committed
				if free >= m.Count {
					continue
				}
				f, t := seg.From.Unix(), seg.To.Unix()
				own := 0
				othersNow := 0
				for _, c := range cal.Overlapping(f, t) {
					if c.Tenant == b.Tenant {
						own += c.Count
						if !ownSeen[c.Booking] {
							ownSeen[c.Booking] = true
							ref.Own = append(ref.Own, byID[c.Booking])
						}
					} else {
						othersNow += c.Count
						otherIDs[c.Booking] = true
					}
				}
				// own and othersNow over-count when commitments do not all
				// overlap each other; the segment's total is exact.
				own = min(own, seg.Committed)
				most = max(most, min(othersNow, seg.Committed-own))
				sh := Shortfall{Resource: r, From: seg.From, To: seg.To, Capacity: seg.Capacity, Committed: seg.Committed,
					Asked: m.Count, Short: m.Count - max(free, 0), OwnCommitted: own, Reasons: reductionsIn(caps[r], f, t)}
				if k := len(ref.Shortfalls) - 1; k >= 0 && mergeable(ref.Shortfalls[k], sh) {
					ref.Shortfalls[k].To = sh.To
					ref.Shortfalls[k].OwnCommitted = max(ref.Shortfalls[k].OwnCommitted, sh.OwnCommitted)
					continue
				}
				ref.Shortfalls = append(ref.Shortfalls, sh)
			}
		}
		if len(otherIDs) > 0 {
			ref.Others = append(ref.Others, OtherTenants{Resource: r, Bookings: len(otherIDs), Most: most})
		}
	}
	if len(ref.Shortfalls) == 0 {
		sh := a.placementShort(b, rest)
		if sh == nil {
			return nil
		}
		ref.Shortfalls = append(ref.Shortfalls, *sh)
	}
	slices.SortFunc(ref.Own, func(x, y Booking) int { return x.Start.Compare(y.Start) })
	return ref
}

func mergeable(a, b Shortfall) bool {
	return a.Resource == b.Resource && a.To.Equal(b.From) && a.Capacity == b.Capacity && a.Committed == b.Committed && a.Asked == b.Asked &&
		slices.Equal(a.Reasons, b.Reasons)
}

// reductionsIn lists the reasons of the reductions in force in [f, t).
func reductionsIn(c Capacity, f, t int64) []string {
	var out []string
	for _, r := range c.Reductions {
		if unix(r.Start) < t && unixEnd(r.End) > f && !slices.Contains(out, r.Reason) {
			out = append(out, r.Reason)
		}
	}
	return out
}

// NextWindows returns up to limit of the earliest windows of b's shape
// (resources, count, length) that fit on top of others, starting at or
// after from and no later than lastStart (zero: no bound).
func (a Admission) NextWindows(b Booking, others []Booking, from, lastStart time.Time, limit int) []Slot {
	probe := b
	probe.Held = Held{}
	probe.Start, probe.End = from, from.Add(b.Duration())
	rs := a.Settings.Resources(probe, a.Inventory)
	var rest []Booking
	for _, o := range others {
		if b.ID == 0 || o.ID != b.ID {
			rest = append(rest, o)
		} else if !o.Held.IsZero() {
			// The booking being changed still holds what Slurm has.
			rest = append(rest, Booking{ID: -1, Tenant: o.Tenant, Kind: o.Kind, GPUType: o.GPUType, NodeClass: o.NodeClass, State: StateCancelled, Held: o.Held})
		}
	}
	cals := a.Calendars(rs, rest, b.ID)
	per := map[Resource]int{}
	for _, c := range a.Settings.Commitments(probe, a.Inventory) {
		per[c.Resource] = max(per[c.Resource], c.Count)
	}
	var needs []Need
	for _, r := range slices.Sorted(maps.Keys(per)) {
		needs = append(needs, Need{Calendar: cals[r], Count: per[r]})
	}
	if !a.Inventory.spreads(a.Settings.placeTypes(probe, a.Inventory)) {
		return FindSlots(needs, from, b.Duration(), lastStart, limit)
	}
	// The types are on several nodes: a window the counts allow must also
	// be held by a placement. In each slot its first start is tried, then
	// each instant within it where something ends (where a placement can
	// change), up to nextTries tries in all.
	ends := a.endsAfter(rest, from)
	pc := a.placeContext(probe, rest)
	var out []Slot
	tries := 0
	for _, sl := range FindSlots(needs, from, b.Duration(), lastStart, nextTries) {
		starts := []time.Time{sl.Start}
		for _, e := range ends {
			if e.After(sl.Start) && (sl.Latest.IsZero() || !e.After(sl.Latest)) && (lastStart.IsZero() || !e.After(lastStart)) {
				starts = append(starts, e)
			}
		}
		for _, st := range starts {
			if tries++; tries > nextTries {
				return out
			}
			p := probe
			p.Start, p.End = st, st.Add(b.Duration())
			if len(a.placeWith(pc, p).Unplaced) == 0 {
				out = append(out, Slot{Start: p.Start, End: p.End, Latest: p.Start})
				break
			}
		}
		if len(out) == limit {
			break
		}
	}
	return out
}

// endsAfter are the instants after from at which a booking's span or a
// maintenance window ends, sorted.
func (a Admission) endsAfter(bookings []Booking, from time.Time) []time.Time {
	var out []time.Time
	for _, b := range bookings {
		if _, e := b.Span(); e.After(from) {
			out = append(out, e)
		}
	}
	for _, m := range a.Maintenance {
		if m.End.After(from) {
			out = append(out, m.End)
		}
	}
	slices.SortFunc(out, func(x, y time.Time) int { return x.Compare(y) })
	return slices.CompactFunc(out, func(x, y time.Time) bool { return x.Equal(y) })
}

// nextTries bounds how many windows NextWindows tries on a placement.
const nextTries = 64

// placementShort is the shortfall of b when its GPU types are on several
// nodes and no placement of the bookings on the nodes' GPUs holds b with
// the others (those no placement held before b came are left out: b is not
// refused for them); nil when one does, or the types are on one node each
// (there the count per type is exact, see Place).
func (a Admission) placementShort(b Booking, rest []Booking) *Shortfall {
	pc := a.placeContext(b, rest)
	if pc == nil {
		return nil
	}
	res := a.placeWith(pc, b)
	if len(res.Unplaced) == 0 {
		return nil
	}
	return a.fragmentShort(b, rest, pc.nodes, pc.kept, pc.types, res.GaveUp)
}

// placeCtx is the placement model of the other bookings of an admission,
// made once (NextWindows tries many windows against it).
type placeCtx struct {
	types []string
	nodes []Node
	known func(int64) bool
	// kept are the other bookings less those no placement held before.
	kept []Booking
}

// placeContext is nil when b's GPU types are on one node each.
func (a Admission) placeContext(b Booking, rest []Booking) *placeCtx {
	types := a.Settings.placeTypes(b, a.Inventory)
	if !a.Inventory.spreads(types) {
		return nil
	}
	pc := &placeCtx{types: types, known: a.accountedSet(rest, b.ID)}
	nodes, items := a.Settings.PlaceItems(rest, a.Inventory, a.Maintenance, a.Now, types, pc.known)
	before := Place(nodes, items)
	pc.nodes = nodes
	for _, o := range rest {
		if !slices.Contains(before.Unplaced, o.ID) {
			pc.kept = append(pc.kept, o)
		}
	}
	return pc
}

// placeWith places b with the kept bookings.
func (a Admission) placeWith(pc *placeCtx, b Booking) PlaceResult {
	if b.ID == 0 {
		b.ID = probeID
	}
	all := append(slices.Clip(pc.kept), b)
	_, items := a.Settings.PlaceItems(all, a.Inventory, a.Maintenance, a.Now, pc.types, pc.known)
	return Place(pc.nodes, items)
}

// probeID stands for a booking not stored yet in the placement model (0
// is a reduction there, -1 NextWindows' stand-in for what Slurm holds).
const probeID = -(1 << 62)

// accountedSet is Capacities' accounted: the reservations of bookings at
// hand (and of also) are counted through them.
func (a Admission) accountedSet(bookings []Booking, also ...int64) func(int64) bool {
	ids := map[int64]bool{}
	for _, o := range bookings {
		ids[o.ID] = true
	}
	for _, id := range also {
		ids[id] = true
	}
	return func(id int64) bool { return ids[id] }
}

// fragmentShort describes a booking that no placement holds: the pool's
// count over its window, and the most GPUs of its type free on one node
// for the whole window when the others are placed without it.
func (a Admission) fragmentShort(b Booking, rest []Booking, nodes []Node, kept []Booking, types []string, gaveUp bool) *Shortfall {
	r := GPU(types[0])
	if b.Kind == KindGPU {
		r = b.Resource()
	}
	cal := a.Calendars([]Resource{r}, rest, b.ID)[r]
	capacity, committed := 0, 0
	minFree := -1
	for _, seg := range cal.Segments(b.Start, b.End) {
		if f := seg.Capacity - seg.Committed; minFree < 0 || f < minFree {
			minFree, capacity, committed = f, seg.Capacity, seg.Committed
		}
	}
	_, typ := r.Split()
	_, items := a.Settings.PlaceItems(kept, a.Inventory, a.Maintenance, a.Now, types, a.accountedSet(rest, b.ID))
	placed := Place(nodes, items)
	best, where := bestNode(nodes, items, placed, typ, b.Start.Unix(), b.End.Unix())
	asked := b.Count
	if b.Kind == KindNode {
		asked = a.Settings.classPerNode(a.Inventory, b.NodeClass)[typ]
	}
	why := fmt.Sprintf("at most %d %s free for the whole window on one node (%s)", best, typ, orDash(where))
	if gaveUp {
		why += fmt.Sprintf("; the search for a placement gave up after %d steps, so gpubridge refuses rather than risk it", placeBudget)
	}
	return &Shortfall{Resource: r, From: b.Start, To: b.End, Capacity: capacity, Committed: committed, Asked: asked,
		Short: max(asked-best, 1), Reasons: []string{why}, Fragmented: true}
}

// bestNode is the most GPUs of typ free on one node for all of [s, e)
// under a placement, and the node.
func bestNode(nodes []Node, items []PlaceItem, p PlaceResult, typ string, s, e int64) (int, string) {
	st := newPlaceState(nodes)
	for i, n := range p.On {
		if n != "" {
			st.put(items[i], n)
		}
	}
	best, where := 0, ""
	for _, n := range nodes {
		if f := n.GPUs[typ] - maxLoad(st.held[[2]string{n.Name, typ}], s, e); n.GPUs[typ] > 0 && f > best {
			best, where = f, n.Name
		}
	}
	return best, where
}
