package api

import (
	"net/http"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
)

// The admin's view of the whole pool on the overview (an admin token):
// beside the pool and every tenant (page.go), the pool's calendar, the
// bookings at risk and the nodes the health service holds.

type adminPoolPage struct {
	adminPage
	Calendar []calType
	AtRisk   []adminBooking
	Held     []nodeRow
}

type adminBooking struct {
	ID                         int64
	Tenant, What, Window, Note string
}

// adminPool is the admin overview's data.
func (s *Server) adminPool(r *http.Request, snap *Snapshot, tok token.Token) adminPoolPage {
	d := adminPoolPage{adminPage: s.adminData(r, snap, tok)}
	ctx := r.Context()
	if svc, err := s.readsOrUnavailable(); err == nil {
		from := snap.At.Truncate(calendarStep)
		if av, err := s.poolAvailability(ctx, svc, reserve.AvailabilityQuery{From: from, To: from.Add(calendarCells * calendarStep), Step: calendarStep}); err == nil {
			d.Calendar = calendar(av, nil, "")
		} else {
			d.Errors = append(d.Errors, "the pool calendar is not available now")
		}
		if bs, err := svc.List(ctx, reserve.ListFilter{States: []reserve.State{reserve.StateAtRisk}}); err == nil {
			for _, b := range bs {
				d.AtRisk = append(d.AtRisk, adminBooking{ID: b.ID, Tenant: b.Tenant, What: b.What(), Window: reserve.Window(b.Start, b.End), Note: b.Note})
			}
		} else {
			d.Errors = append(d.Errors, "the bookings at risk are not available now")
		}
	}
	if s.o.Health != nil {
		nodes, err := s.o.Health.Nodes(ctx, "")
		if err != nil {
			d.Errors = append(d.Errors, "the nodes' health is not available now")
		}
		for _, n := range nodes {
			if n.State == health.Drained || n.State == health.Requalify || n.State == health.External || n.State == health.BurnIn {
				d.Held = append(d.Held, nodeRow{NodeView: n, Next: nextStep(n)})
			}
		}
	}
	return d
}
