package app

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// The bookings as the node health credits see them (credit job's
// billing.BookedPlacements): where each booking's GPUs were.

// BookedPlacements lists the booking store's placements for the credit
// job (BookedPlacementsOf of every booking).
func (e *Env) BookedPlacements(ctx context.Context, from, to time.Time) ([]billing.BookedPlacement, error) {
	bk, err := e.BookingStore(ctx)
	if err != nil {
		return nil, err
	}
	all, err := bk.Store.List(ctx, reserve.Filter{})
	if err != nil {
		return nil, err
	}
	return BookedPlacementsOf(all, from, to), nil
}

// BookedPlacementsOf reduces bookings to their GPUs per node and type over
// the part of their window that overlaps [from, to) and was theirs: a
// cancelled booking's window ends at its cancel time (what it pays after
// that is for the notice it did not give, not for GPUs it held).
//
// Where the GPUs were is the booking's Slurm reservation as last
// projected (Booking.Held.Nodes). A whole-node booking holds, on each of
// its nodes, the GPUs per node by type that admission recorded
// (Booking.PerNode; a booking without the figure is left out, as its
// charge is). A GPU booking on one node holds its count there. A GPU
// booking that Slurm spread over several nodes, or whose nodes are not
// known, is left out: how many of its GPUs a drained node held is not
// known, and a credit is never a guess.
func BookedPlacementsOf(bs []reserve.Booking, from, to time.Time) []billing.BookedPlacement {
	var out []billing.BookedPlacement
	for _, b := range bs {
		start, end := b.Start, b.End
		if b.Cancelled() {
			if b.CancelledAt.IsZero() {
				continue
			}
			end = minTime(end, b.CancelledAt)
		}
		if !end.After(start) || !start.Before(to) || !end.After(from) || len(b.Held.Nodes) == 0 {
			continue
		}
		p := billing.BookedPlacement{ID: b.ID, Account: strings.ToLower(b.Tenant), Start: start, End: end}
		switch {
		case b.Kind == reserve.KindNode:
			for _, n := range b.Held.Nodes {
				for _, t := range slices.Sorted(maps.Keys(b.PerNode)) {
					if b.PerNode[t] > 0 {
						p.Node, p.Type, p.GPUs = n, t, b.PerNode[t]
						out = append(out, p)
					}
				}
			}
		case len(b.Held.Nodes) == 1 && b.Count > 0:
			p.Node, p.Type, p.GPUs = b.Held.Nodes[0], b.GPUType, b.Count
			out = append(out, p)
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
