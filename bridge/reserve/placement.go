package reserve

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/gpubridge/gpubridge/internal/interval"
)

// Placement: a Slurm reservation of N GPUs holds N particular GPUs of one
// node (the ones bound to the cores it takes) for its whole window, so a
// node's GPUs fragment over time: two GPUs free at every instant of a
// window are not always the same two. The placement model assigns each
// booking a node and a set of GPU indices held for its whole window.
//
// What Slurm does (26.05.5, measured on the testbed, docs/bookings.md): a
// GPU (TRES) reservation takes the lowest-indexed GPUs of its type that are
// free for its whole window, on the first node of the partition that has
// enough; with a node list it stays on those nodes. Two facts follow:
//
//   - Created in order of start, reservations always land: each one's
//     overlapping predecessors all hold its start, so the GPUs free at its
//     start are free for its whole window. Hence on one node the count at
//     every instant is exact (an interval graph is perfect), provided the
//     reservations that have not started are re-created in that order when
//     fragments block one (Projector.Project does).
//   - Across nodes it is not: a booking needs its GPUs on one node, and
//     which node each goes to matters. Place searches for an assignment.

// PlaceItem is one thing that holds GPUs of nodes over [Start, End) (Unix
// seconds): a booking's reservation, or a reduction (maintenance, a node
// down, a reservation of somebody else's) that holds them regardless.
type PlaceItem struct {
	Booking int64
	// Type is the GPU type; "" holds the nodes whole (every GPU of every
	// type), Count of them (a node booking, maintenance, a down node).
	Type       string
	Count      int
	Start, End int64
	// Nodes it may be placed on, in order of preference; one node fixes it.
	Nodes []string
	// Must: placed on Nodes[0] whatever else holds (Slurm holds it now).
	Must bool
}

// Placed is where the model puts an item: its node and, for a GPU item,
// the indices of its type's GPUs on that node (0-based, lowest free first).
type Placed struct {
	Booking int64
	Type    string
	Node    string
	GPUs    []int
}

// PlaceResult is a placement: the placed items in the order their
// reservations are to be created (by start, then booking) and the bookings
// no placement found room for.
type PlaceResult struct {
	Placed   []Placed
	Unplaced []int64
	// GaveUp is true when the search hit its step budget; Unplaced is then
	// what a first-fit left over, which may be more than needed.
	GaveUp bool
	// On is the node of each item (by index; "" when unplaced).
	On []string
}

// placeBudget bounds the node-assignment search (steps).
const placeBudget = 200_000

// Place assigns every item a node (and GPU indices): Must items first where
// they are, then the others in order of start, each on the first candidate
// node where its GPUs are free for its whole window, backtracking over the
// choice of node when a later item finds no room. nodes are the GPUs per
// type of each node.
func Place(nodes []Node, items []PlaceItem) PlaceResult {
	st := newPlaceState(nodes)
	order := placeOrder(items)
	var free []int // indices into order of the items to search
	for _, i := range order {
		if items[i].Must {
			st.put(items[i], firstNode(items[i]))
		} else {
			free = append(free, i)
		}
	}
	res := PlaceResult{}
	choice := make([]string, len(items))
	steps := 0
	ok := st.search(items, free, 0, choice, &steps)
	if !ok {
		res.GaveUp = steps >= placeBudget
		// First fit: what it cannot hold is unplaced.
		st = newPlaceState(nodes)
		for _, i := range order {
			if items[i].Must {
				st.put(items[i], firstNode(items[i]))
			}
		}
		for _, i := range free {
			choice[i] = ""
			for _, n := range items[i].Nodes {
				if st.fits(items[i], n) {
					choice[i] = n
					st.put(items[i], n)
					break
				}
			}
			if choice[i] == "" && items[i].Booking != 0 {
				res.Unplaced = append(res.Unplaced, items[i].Booking)
			}
		}
	}
	for _, i := range order {
		if items[i].Must {
			choice[i] = firstNode(items[i])
		}
	}
	res.Placed = assignGPUs(nodes, items, order, choice)
	res.On = choice
	slices.Sort(res.Unplaced)
	res.Unplaced = slices.Compact(res.Unplaced)
	return res
}

func firstNode(it PlaceItem) string {
	if len(it.Nodes) == 0 {
		return ""
	}
	return it.Nodes[0]
}

// placeOrder is the items' indices by start, then larger first, then
// booking: the order of creation.
func placeOrder(items []PlaceItem) []int {
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		x, y := items[a], items[b]
		return cmp.Or(cmp.Compare(x.Start, y.Start), cmp.Compare(y.Count, x.Count), cmp.Compare(x.Booking, y.Booking))
	})
	return order
}

// span is a count of one node's GPUs of one type, held over an interval.
type span struct {
	interval.Interval
	count int
}

type placeState struct {
	cap  map[string]map[string]int // node -> type -> GPUs
	held map[[2]string][]span      // (node, type) -> what is placed
}

func newPlaceState(nodes []Node) *placeState {
	st := &placeState{cap: map[string]map[string]int{}, held: map[[2]string][]span{}}
	for _, n := range nodes {
		st.cap[n.Name] = n.GPUs
	}
	return st
}

// types are the (node, type) pairs an item takes on node n, with how many.
func (st *placeState) takes(it PlaceItem, n string) map[string]int {
	if it.Type != "" {
		return map[string]int{it.Type: it.Count}
	}
	return st.cap[n] // whole node: every GPU
}

// fits reports whether it finds its GPUs free on n for its whole window.
func (st *placeState) fits(it PlaceItem, n string) bool {
	caps, ok := st.cap[n]
	if !ok {
		return false
	}
	for t, c := range st.takes(it, n) {
		if c > caps[t] || maxLoad(st.held[[2]string{n, t}], it.Start, it.End)+c > caps[t] {
			return false
		}
	}
	return true
}

func (st *placeState) put(it PlaceItem, n string) {
	for t, c := range st.takes(it, n) {
		k := [2]string{n, t}
		st.held[k] = append(st.held[k], span{interval.Interval{Start: it.Start, End: it.End}, c})
	}
}

func (st *placeState) pop(it PlaceItem, n string) {
	for t := range st.takes(it, n) {
		k := [2]string{n, t}
		st.held[k] = st.held[k][:len(st.held[k])-1]
	}
}

// search places free[k:] by depth-first search over their candidate
// nodes; false when no assignment holds them all (or the budget is spent).
func (st *placeState) search(items []PlaceItem, free []int, k int, choice []string, steps *int) bool {
	if k == len(free) {
		return true
	}
	it := items[free[k]]
	for _, n := range it.Nodes {
		if *steps >= placeBudget {
			return false
		}
		*steps++
		if !st.fits(it, n) {
			continue
		}
		st.put(it, n)
		choice[free[k]] = n
		if st.search(items, free, k+1, choice, steps) {
			return true
		}
		st.pop(it, n)
		choice[free[k]] = ""
		if len(it.Nodes) > 1 && st.symmetric(it, n) {
			break // the other nodes look the same: no use trying them
		}
	}
	return false
}

// symmetric reports whether every other candidate of it is, for it, the
// same as n (same GPUs and nothing held on either): trying them again
// repeats the same failure.
func (st *placeState) symmetric(it PlaceItem, n string) bool {
	for _, o := range it.Nodes {
		if o == n {
			continue
		}
		if !maps.Equal(st.cap[o], st.cap[n]) {
			return false
		}
		for t := range st.cap[o] {
			if len(st.held[[2]string{o, t}]) > 0 || len(st.held[[2]string{n, t}]) > 0 {
				return false
			}
		}
	}
	return true
}

// maxLoad is the most the spans hold at once within [s, e).
func maxLoad(ss []span, s, e int64) int {
	type ev struct {
		t int64
		d int
	}
	var evs []ev
	for _, x := range ss {
		if x.Start < e && x.End > s {
			evs = append(evs, ev{max(x.Start, s), x.count}, ev{min(x.End, e), -x.count})
		}
	}
	if len(evs) == 0 {
		return 0
	}
	// Ends before starts at the same instant: windows are half-open.
	slices.SortFunc(evs, func(a, b ev) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.d, b.d)) })
	cur, most := 0, 0
	for _, x := range evs {
		cur += x.d
		most = max(most, cur)
	}
	return most
}

// assignGPUs gives each placed GPU item the lowest GPU indices of its type
// on its node that are free for its whole window, in creation order (what
// Slurm does when they are created in that order).
func assignGPUs(nodes []Node, items []PlaceItem, order []int, choice []string) []Placed {
	caps := map[string]map[string]int{}
	for _, n := range nodes {
		caps[n.Name] = n.GPUs
	}
	type hold struct {
		interval.Interval
		idx []int
	}
	held := map[[2]string][]hold{}
	var out []Placed
	for _, i := range order {
		it, n := items[i], choice[i]
		if n == "" {
			continue
		}
		takes := map[string]int{it.Type: it.Count}
		if it.Type == "" {
			takes = caps[n]
		}
		p := Placed{Booking: it.Booking, Type: it.Type, Node: n}
		for _, t := range slices.Sorted(maps.Keys(takes)) {
			k := [2]string{n, t}
			busy := map[int]bool{}
			for _, h := range held[k] {
				if h.Start < it.End && h.End > it.Start {
					for _, x := range h.idx {
						busy[x] = true
					}
				}
			}
			var idx []int
			for x := 0; x < caps[n][t] && len(idx) < takes[t]; x++ {
				if !busy[x] {
					idx = append(idx, x)
				}
			}
			held[k] = append(held[k], hold{interval.Interval{Start: it.Start, End: it.End}, idx})
			if it.Type != "" {
				p.GPUs = idx
			}
		}
		out = append(out, p)
	}
	return out
}

// spreads reports whether a GPU type of the pool is on more than one node:
// only then does the choice of node matter, and the count per type (the
// calendar) may admit what no placement holds.
func (inv Inventory) spreads(types []string) bool {
	for _, t := range types {
		n := 0
		for _, nd := range inv.Nodes {
			if nd.GPUs[t] > 0 {
				n++
			}
		}
		if n > 1 {
			return true
		}
	}
	return false
}

// placeTypes are the GPU types a booking takes: its own, or its class's.
func (s Settings) placeTypes(b Booking, inv Inventory) []string {
	if b.Kind == KindGPU {
		return []string{b.GPUType}
	}
	return slices.Sorted(maps.Keys(s.classPerNode(inv, b.NodeClass)))
}

// PlaceItems builds the placement model of the GPUs of types: the pool's
// nodes that have any of them, and as items the bookings (a booking whose
// reservation has started and is placed stays where it is: Must), the
// maintenance windows and down nodes (whole nodes), and the reservations
// not accounted for by a booking. accounted is as for Capacities.
func (s Settings) PlaceItems(bookings []Booking, inv Inventory, maint []Maintenance, now time.Time, types []string, accounted func(int64) bool) ([]Node, []PlaceItem) {
	want := map[string]bool{}
	for _, t := range types {
		want[t] = true
	}
	var nodes []Node
	has := map[string]bool{}
	for _, n := range inv.Nodes {
		for t, c := range n.GPUs {
			if c > 0 && want[t] && !has[n.Name] {
				has[n.Name] = true
				nodes = append(nodes, n)
			}
		}
	}
	var items []PlaceItem
	whole := func(n string, s, e int64) {
		if has[n] && e > s {
			items = append(items, PlaceItem{Count: 1, Start: s, End: e, Nodes: []string{n}, Must: true})
		}
	}
	for _, n := range nodes {
		if n.Down != "" {
			whole(n.Name, now.Unix(), forever)
		}
	}
	for _, m := range maint {
		for _, n := range m.Nodes {
			whole(n, unix(m.Start), unixEnd(m.End))
		}
	}
	items = s.foreignItems(items, inv, has, want, accounted)
	for _, b := range bookings {
		items = s.bookingItems(items, b, nodes, now, want)
	}
	return nodes, items
}

// foreignItems appends the reservations that no booking at hand accounts
// for: whole nodes, or their typed GPUs on each of their nodes (all of them
// on each: errs low).
func (s Settings) foreignItems(items []PlaceItem, inv Inventory, has, want map[string]bool, accounted func(int64) bool) []PlaceItem {
	for _, r := range inv.Reservations {
		if id, ours := s.BookingID(r.Name); ours && (accounted == nil || accounted(id)) {
			continue
		}
		st, en := r.Start.Unix(), r.End.Unix()
		if en <= st {
			continue
		}
		for _, n := range r.Nodes {
			if !has[n] {
				continue
			}
			if r.WholeNodes {
				items = append(items, PlaceItem{Count: 1, Start: st, End: en, Nodes: []string{n}, Must: true})
				continue
			}
			for t, c := range r.GPUs {
				if want[t] && c > 0 {
					items = append(items, PlaceItem{Type: t, Count: c, Start: st, End: en, Nodes: []string{n}, Must: true})
				}
			}
		}
	}
	return items
}

// bookingItems appends a booking's items: for a GPU booking one item over
// its span with the most it commits (pieces of more GPUs than any node has
// are split), for a node booking one whole-node item per node.
func (s Settings) bookingItems(items []PlaceItem, b Booking, nodes []Node, now time.Time, want map[string]bool) []PlaceItem {
	from, to := b.Span()
	st, en := from.Unix(), to.Unix()
	if en <= st || (b.Cancelled() && b.Held.IsZero()) {
		return items
	}
	started := !b.Held.IsZero() && !now.Before(b.Held.Start) && len(b.Held.Nodes) > 0
	if b.Kind == KindNode {
		if len(b.Held.Nodes) > 0 {
			for _, n := range b.Held.Nodes {
				items = append(items, PlaceItem{Booking: b.ID, Count: 1, Start: st, End: en, Nodes: []string{n}, Must: true})
			}
			return items
		}
		var cands []string
		for _, n := range nodes {
			if slices.Contains(s.NodeClasses[b.NodeClass], n.Name) {
				cands = append(cands, n.Name)
			}
		}
		if len(cands) == 0 {
			return items
		}
		for range b.Count {
			items = append(items, PlaceItem{Booking: b.ID, Count: 1, Start: st, End: en, Nodes: cands})
		}
		return items
	}
	if !want[b.GPUType] {
		return items
	}
	count := max(b.Count, b.Held.Count)
	if b.Cancelled() {
		count = b.Held.Count
	}
	var cands []string
	most := 0
	if len(b.Held.Nodes) > 0 {
		cands = append(cands, b.Held.Nodes[0])
	}
	for _, n := range nodes {
		if c := n.GPUs[b.GPUType]; c > 0 {
			most = max(most, c)
			if !slices.Contains(cands, n.Name) {
				cands = append(cands, n.Name)
			}
		}
	}
	if started {
		cands = cands[:1]
	}
	for count > 0 && most > 0 {
		c := min(count, most)
		items = append(items, PlaceItem{Booking: b.ID, Type: b.GPUType, Count: c, Start: st, End: en, Nodes: cands, Must: started})
		count -= c
	}
	return items
}
