package app

import (
	"context"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health/credit/ledgeradapter"
	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// The bookings as the node health credits see them (credit job's
// ledgeradapter.BookedPlacements): where each booking's GPUs were.

// BookedPlacements lists the booking store's placements for the credit
// job (BookedPlacementsOf of every booking and its placement history).
func (e *Env) BookedPlacements(ctx context.Context, from, to time.Time) ([]ledgeradapter.BookedPlacement, error) {
	bk, err := e.BookingStore(ctx)
	if err != nil {
		return nil, err
	}
	all, err := bk.Store.List(ctx, reserve.Filter{})
	if err != nil {
		return nil, err
	}
	hist, err := bk.Store.Placements(ctx)
	if err != nil {
		return nil, err
	}
	return ledgeradapter.BookedPlacementsOf(all, hist, from, to), nil
}
