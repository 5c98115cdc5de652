package reserve

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/internal/interval"
)

// Node is one node of the pool as slurmctld reports it.
type Node struct {
	Name string
	// GPUs are the node's typed GPUs (models and MIG profiles) by type.
	GPUs map[string]int
	// Down, when not empty, is why the node's GPUs cannot be booked now
	// (its Slurm state: DOWN, DRAIN, FAIL, NOT_RESPONDING, ...). A node
	// down now counts as down from now on: when it comes back is unknown.
	Down string
}

// Reservation is a Slurm reservation as slurmctld reports it: gpubridge's
// own (named Settings.Prefix + booking id) and everybody else's.
type Reservation struct {
	Name     string
	Accounts []string
	Start    time.Time
	End      time.Time
	Flags    []string
	// GPUs are the typed GPUs in its TRES (gres/gpu:h100=2); UntypedGPUs
	// the untyped count (gres/gpu=2) when no typed entry is given.
	GPUs        map[string]int
	UntypedGPUs int
	// Nodes are the nodes it covers; WholeNodes is true when it holds them
	// entirely (a node or node-count reservation, TRES without GPUs).
	Nodes      []string
	WholeNodes bool
}

// Inventory is the cluster as the capacity model needs it: the pool's
// nodes and every reservation.
type Inventory struct {
	Nodes        []Node
	Reservations []Reservation
}

// Types returns the GPU types of the pool, sorted.
func (inv Inventory) Types() []string {
	seen := map[string]bool{}
	for _, n := range inv.Nodes {
		for t, c := range n.GPUs {
			if c > 0 {
				seen[t] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// Total returns the pool's GPUs of a type.
func (inv Inventory) Total(typ string) int {
	n := 0
	for _, nd := range inv.Nodes {
		n += nd.GPUs[typ]
	}
	return n
}

func (inv Inventory) node(name string) (Node, bool) {
	for _, n := range inv.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return Node{}, false
}

// Maintenance is an admin maintenance window: the nodes' GPUs cannot be
// booked in [Start, End).
type Maintenance struct {
	ID        int64     `json:"id"`
	Nodes     []string  `json:"nodes"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Reason    string    `json:"reason"`
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
}

// Settings are the booking settings of the installation (config bookings.*).
type Settings struct {
	// Prefix names gpubridge's reservations: Prefix + booking id.
	Prefix string
	// LeadTime is how long before its start a booking's reservation is
	// created: at least the pool's longest job time limit, so that the
	// scheduler keeps the GPUs free of jobs that would run into the window.
	LeadTime time.Duration
	// UnbookablePercent of each type's pool GPUs (rounded up) is kept for
	// quota and burst work and never booked.
	UnbookablePercent int
	// NodeClasses name sets of nodes that may be booked whole.
	NodeClasses map[string][]string
	// DefaultPolicy applies to tenants whose spec carries none.
	DefaultPolicy Policy
}

// Validate reports every problem with the settings.
func (s Settings) Validate() Problems {
	var ps Problems
	if s.Prefix == "" || !validSlurmName(s.Prefix) {
		ps.Add("bookings.reservationPrefix", "%q must be letters, digits, '-', '_' or '.' (default gpubridge-)", s.Prefix)
	}
	if s.LeadTime < 0 {
		ps.Add("bookings.leadTime", "must not be negative")
	}
	if s.UnbookablePercent < 0 || s.UnbookablePercent > 100 {
		ps.Add("bookings.unbookablePercent", "%d is not a percentage from 0 to 100", s.UnbookablePercent)
	}
	for _, c := range slices.Sorted(maps.Keys(s.NodeClasses)) {
		if !validSlurmName(c) || strings.Contains(c, ":") {
			ps.Add("bookings.nodeClasses", "class name %q: letters, digits, '-', '_' or '.'", c)
		}
		if len(s.NodeClasses[c]) == 0 {
			ps.Add("bookings.nodeClasses."+c, "lists no nodes")
		}
	}
	ps = append(ps, s.DefaultPolicy.Validate("bookings.defaultPolicy")...)
	return ps
}

func validSlurmName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// BookingID returns the booking id a reservation name carries, when it is
// one of gpubridge's (Prefix followed by a decimal id).
func (s Settings) BookingID(name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, s.Prefix)
	if !ok || rest == "" || rest[0] == '0' {
		return 0, false
	}
	for _, r := range rest {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil
}

// ReservationName is the Slurm reservation of booking id.
func (s Settings) ReservationName(id int64) string { return s.Prefix + strconv.FormatInt(id, 10) }

// classNodes returns the pool nodes of a class, sorted by name.
func (s Settings) classNodes(inv Inventory, class string) []Node {
	var out []Node
	for _, name := range s.NodeClasses[class] {
		if n, ok := inv.node(name); ok {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b Node) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// classPerNode is the GPUs per node of a class, by type: the largest count
// any node of the class has (admission refuses a node booking of a class
// whose nodes differ, mixedClass; this never under-counts).
func (s Settings) classPerNode(inv Inventory, class string) map[string]int {
	per := map[string]int{}
	for _, n := range s.classNodes(inv, class) {
		for t, c := range n.GPUs {
			per[t] = max(per[t], c)
		}
	}
	return per
}

// mixedClass finds two nodes of a class whose GPUs differ (types with no
// GPUs left out), and describes them ("gpu-a h100:4", "gpu-c h100:8");
// "" when all are alike. Admission refuses a node booking of such a class:
// it would count and charge each node as the largest of them.
func mixedClass(nodes []Node) (string, string) {
	gpus := func(n Node) string {
		var ts []string
		for _, t := range slices.Sorted(maps.Keys(n.GPUs)) {
			if n.GPUs[t] > 0 {
				ts = append(ts, t+":"+strconv.Itoa(n.GPUs[t]))
			}
		}
		if ts == nil {
			return "no GPUs"
		}
		return strings.Join(ts, ",")
	}
	for _, n := range nodes[min(1, len(nodes)):] {
		if a, z := gpus(nodes[0]), gpus(n); a != z {
			return nodes[0].Name + " " + a, n.Name + " " + z
		}
	}
	return "", ""
}

// PerNode is the GPUs per node of a class by type, as admission counts
// them (classPerNode), for recording on a node booking (Booking.PerNode):
// never nil, empty for a class without GPUs; types with no GPUs are left
// out.
func (s Settings) PerNode(inv Inventory, class string) map[string]int {
	out := map[string]int{}
	for t, c := range s.classPerNode(inv, class) {
		if c > 0 {
			out[t] = c
		}
	}
	return out
}

// Resources returns the resources a booking takes capacity from: its own,
// and for a node booking the GPU types of its class. Sorted, so that
// locks taken in this order never deadlock.
func (s Settings) Resources(b Booking, inv Inventory) []Resource {
	rs := []Resource{b.Resource()}
	if b.Kind == KindNode {
		for _, t := range slices.Sorted(maps.Keys(s.classPerNode(inv, b.NodeClass))) {
			rs = append(rs, GPU(t))
		}
	}
	slices.Sort(rs)
	return rs
}

// Related returns the resources whose bookings can take capacity from rs:
// rs, and every node class that has GPUs of a type in rs. An admission
// reads the bookings of all of them.
func (s Settings) Related(rs []Resource, inv Inventory) []Resource {
	out := slices.Clone(rs)
	types := map[string]bool{}
	for _, r := range rs {
		if k, n := r.Split(); k == KindGPU {
			types[n] = true
		}
	}
	for _, c := range slices.Sorted(maps.Keys(s.NodeClasses)) {
		for t := range s.classPerNode(inv, c) {
			if types[t] {
				out = append(out, NodeClass(c))
				break
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Reduction is capacity taken away from a resource over [Start, End); a
// zero Start is the beginning of time, a zero End open-ended.
type Reduction struct {
	Start  time.Time `json:"start,omitzero"`
	End    time.Time `json:"end,omitzero"`
	Count  int       `json:"count"`
	Reason string    `json:"reason"`
}

// Capacity is a resource's bookable capacity: Total less the reductions in
// force at each instant (never below zero).
type Capacity struct {
	Resource   Resource    `json:"resource"`
	Total      int         `json:"total"`
	Reductions []Reduction `json:"reductions,omitempty"`
}

// Capacities computes the bookable capacity of every resource of the pool
// at now: per GPU type the pool's GPUs less the unbookable share, the
// GPUs of nodes down now (from now on) or in maintenance, and the GPUs of
// reservations not accounted for by a booking; per node class the nodes of
// the class less those down, in maintenance, or (partly or wholly) taken
// by such reservations. A node counted unavailable for several reasons at
// once is subtracted once; a foreign GPU reservation on such a node is
// subtracted again (capacity errs low, never high).
//
// accounted tells which of gpubridge's own reservations (by booking id) are
// counted through their booking's commitments (the bookings at hand); the
// others (an orphan, or one that reaches beyond its booking's recorded
// span) take capacity like anybody's. nil treats all of gpubridge's
// reservations as accounted.
func (s Settings) Capacities(inv Inventory, maint []Maintenance, now time.Time, accounted func(id int64) bool) map[Resource]Capacity {
	gone, foreign := s.unavailable(inv, maint, now, accounted)
	// Union each node's spans, so that one node is subtracted once.
	merged := map[string][]goneSpan{}
	for name, ss := range gone {
		merged[name] = mergeGone(ss)
	}
	out := map[Resource]Capacity{}
	for _, typ := range inv.Types() {
		c := s.gpuCapacity(inv, typ, merged, foreign)
		out[c.Resource] = c
	}
	for _, class := range slices.Sorted(maps.Keys(s.NodeClasses)) {
		c := s.classCapacity(inv, class, merged, foreign)
		out[c.Resource] = c
	}
	return out
}

// goneSpan is an interval in which a node is gone entirely (down from now
// on, in maintenance, or held whole by a reservation not accounted for by
// a booking), and why.
type goneSpan struct {
	interval.Interval
	reason string
}

// unavailable is, per node, when its GPUs are gone entirely (gone), and
// the reservations not accounted for by a booking that hold GPUs rather
// than whole nodes (foreign); see Capacities for accounted.
func (s Settings) unavailable(inv Inventory, maint []Maintenance, now time.Time, accounted func(id int64) bool) (gone map[string][]goneSpan, foreign []Reservation) {
	gone = map[string][]goneSpan{}
	for _, n := range inv.Nodes {
		if n.Down != "" {
			gone[n.Name] = append(gone[n.Name], goneSpan{interval.Interval{Start: now.Unix(), End: math.MaxInt64}, n.Name + " is " + n.Down})
		}
	}
	for _, m := range maint {
		for _, nn := range m.Nodes {
			r := fmt.Sprintf("maintenance %d on %s", m.ID, nn)
			if m.Reason != "" {
				r += " (" + m.Reason + ")"
			}
			gone[nn] = append(gone[nn], goneSpan{interval.Interval{Start: m.Start.Unix(), End: m.End.Unix()}, r})
		}
	}
	for _, r := range inv.Reservations {
		if id, ours := s.BookingID(r.Name); ours && (accounted == nil || accounted(id)) {
			continue // counted through its booking (Booking.Held)
		}
		if !r.End.After(r.Start) {
			continue
		}
		if r.WholeNodes {
			for _, nn := range r.Nodes {
				gone[nn] = append(gone[nn], goneSpan{interval.Interval{Start: r.Start.Unix(), End: r.End.Unix()}, "reservation " + r.Name + " holds " + nn})
			}
			continue
		}
		foreign = append(foreign, r)
	}
	return gone, foreign
}

// mergeGone is the union of one node's spans (sorted in place by start),
// each merged span giving every reason once.
func mergeGone(ss []goneSpan) []goneSpan {
	sort.Slice(ss, func(i, j int) bool { return ss[i].Start < ss[j].Start })
	var m []goneSpan
	for _, x := range ss {
		if len(m) > 0 && x.Start <= m[len(m)-1].End {
			last := &m[len(m)-1]
			last.End = max(last.End, x.End)
			if !strings.Contains(last.reason, x.reason) {
				last.reason += "; " + x.reason
			}
			continue
		}
		m = append(m, x)
	}
	return m
}

// unixTime is Unix seconds v as a time; an unbounded end is the zero time.
func unixTime(v int64) time.Time {
	if v == math.MaxInt64 || v == math.MinInt64 {
		return time.Time{}
	}
	return time.Unix(v, 0).UTC()
}

// gpuCapacity is the bookable capacity of GPU type typ: the pool's GPUs of
// the type, less the unbookable share, the GPUs of its nodes while they are
// gone (merged), and the GPUs of the type the foreign reservations hold.
func (s Settings) gpuCapacity(inv Inventory, typ string, merged map[string][]goneSpan, foreign []Reservation) Capacity {
	c := Capacity{Resource: GPU(typ), Total: inv.Total(typ)}
	if s.UnbookablePercent > 0 {
		keep := (c.Total*s.UnbookablePercent + 99) / 100
		c.Reductions = append(c.Reductions, Reduction{Count: keep, Reason: fmt.Sprintf("%d%% unbookable (bookings.unbookablePercent)", s.UnbookablePercent)})
	}
	for _, n := range inv.Nodes {
		if n.GPUs[typ] == 0 {
			continue
		}
		for _, sp := range merged[n.Name] {
			c.Reductions = append(c.Reductions, Reduction{Start: unixTime(sp.Start), End: unixTime(sp.End), Count: n.GPUs[typ], Reason: sp.reason})
		}
	}
	for _, r := range foreign {
		cnt := r.GPUs[typ]
		if cnt == 0 && len(r.GPUs) == 0 && r.UntypedGPUs > 0 && onType(inv, r.Nodes, typ) {
			cnt = r.UntypedGPUs
		}
		if cnt > 0 {
			c.Reductions = append(c.Reductions, Reduction{Start: r.Start, End: r.End, Count: cnt, Reason: "reservation " + r.Name})
		}
	}
	return c
}

// classCapacity is the bookable capacity of node class class: its nodes,
// less each while it is gone (merged) or a foreign reservation sits on it.
func (s Settings) classCapacity(inv Inventory, class string, merged map[string][]goneSpan, foreign []Reservation) Capacity {
	nodes := s.classNodes(inv, class)
	c := Capacity{Resource: NodeClass(class), Total: len(nodes)}
	for _, n := range nodes {
		for _, sp := range merged[n.Name] {
			c.Reductions = append(c.Reductions, Reduction{Start: unixTime(sp.Start), End: unixTime(sp.End), Count: 1, Reason: sp.reason})
		}
		for _, r := range foreign {
			if slices.Contains(r.Nodes, n.Name) {
				c.Reductions = append(c.Reductions, Reduction{Start: r.Start, End: r.End, Count: 1, Reason: "reservation " + r.Name + " on " + n.Name})
			}
		}
	}
	return c
}

// onType reports whether an untyped GPU reservation may hold GPUs of typ:
// when its nodes are unknown, or one of them has that type.
func onType(inv Inventory, nodes []string, typ string) bool {
	if len(nodes) == 0 {
		return true
	}
	for _, nn := range nodes {
		if n, ok := inv.node(nn); ok && n.GPUs[typ] > 0 {
			return true
		}
	}
	return false
}
