package ledgeradapter

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// BookedPlacementsOf reduces bookings to their GPUs per node and type over
// the part of their window that overlaps [from, to) and was theirs: a
// cancelled booking's window ends at its cancel time (what it pays after
// that is for the notice it did not give, not for GPUs it held).
//
// Where the GPUs were is the booking's placement history (hist, from
// reserve.Store.Placements): each node list from when the projector
// recorded it until the booking was placed elsewhere, the first one from
// the window's start (the history began with the nodes each booking held
// then). A booking without history is where its Slurm reservation was
// last projected (Booking.Held.Nodes), for its whole window. A whole-node
// booking holds, on each of its nodes, the GPUs per node by type that
// admission recorded (Booking.PerNode; a booking without the figure is
// left out, as its charge is). A GPU booking on one node holds its count
// there. A GPU booking that Slurm spread over several nodes, or whose
// nodes are not known, is left out: how many of its GPUs a drained node
// held is not known, and a credit is never a guess.
func BookedPlacementsOf(bs []reserve.Booking, hist map[int64][]reserve.Placement, from, to time.Time) []BookedPlacement {
	var out []BookedPlacement
	for _, b := range bs {
		start, end := b.Start, b.End
		if b.Cancelled() {
			if b.CancelledAt.IsZero() {
				continue
			}
			end = minTime(end, b.CancelledAt)
		}
		if !end.After(start) || !start.Before(to) || !end.After(from) {
			continue
		}
		parts := map[string]int{} // per node: the parts seen so far
		for _, seg := range segments(b, hist[b.ID], start, end) {
			p := BookedPlacement{ID: b.ID, Account: strings.ToLower(b.Tenant), Start: seg.start, End: seg.end, RateFrom: start}
			switch {
			case b.Kind == reserve.KindNode:
				for _, n := range seg.nodes {
					p.Node, p.Part = n, parts[n]
					parts[n]++
					for _, t := range slices.Sorted(maps.Keys(b.PerNode)) {
						if b.PerNode[t] > 0 {
							p.Type, p.GPUs = t, b.PerNode[t]
							out = append(out, p)
						}
					}
				}
			case len(seg.nodes) == 1 && b.Count > 0:
				n := seg.nodes[0]
				p.Node, p.Type, p.GPUs, p.Part = n, b.GPUType, b.Count, parts[n]
				parts[n]++
				out = append(out, p)
			}
		}
	}
	return out
}

type segment struct {
	start, end time.Time
	nodes      []string
}

// segments are the parts of [start, end) with their nodes: each placement
// until the next one elsewhere (a row without nodes, or with the same
// nodes, continues the one before), the first from start.
func segments(b reserve.Booking, hist []reserve.Placement, start, end time.Time) []segment {
	var rows []reserve.Placement
	for _, h := range hist {
		if len(h.Nodes) > 0 && (len(rows) == 0 || !slices.Equal(rows[len(rows)-1].Nodes, h.Nodes)) {
			rows = append(rows, h)
		}
	}
	if len(rows) == 0 {
		if len(b.Held.Nodes) == 0 {
			return nil
		}
		return []segment{{start, end, b.Held.Nodes}}
	}
	var out []segment
	for i, h := range rows {
		s, e := start, end
		if i > 0 && h.Since.After(s) {
			s = h.Since
		}
		if i+1 < len(rows) && rows[i+1].Since.Before(e) {
			e = rows[i+1].Since
		}
		if e.After(s) {
			out = append(out, segment{s, e, h.Nodes})
		}
	}
	return out
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
