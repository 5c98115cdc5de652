package api

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
)

// The calendar routes: availability and slots, answered from the cache.

// redact hides what the availability says about reductions beyond their
// size and time: the names of foreign reservations and maintenance
// reasons are the site's, not the tenant's.
func redact(av reserve.Availability) reserve.Availability {
	out := av
	out.Resources = make([]reserve.ResourceAvailability, len(av.Resources))
	for i, r := range av.Resources {
		r.Reductions = slices.Clone(r.Reductions)
		for j := range r.Reductions {
			r.Reductions[j].Reason = "unavailable"
		}
		out.Resources[i] = r
	}
	return out
}

// availability answers the free and booked capacity through the booking
// use cases (Bookings.Availability, what show availability runs), from
// the cache; a tenant's token sees the reductions redacted.
func (s *Server) availability(q *req) (int, any, error) {
	svc, err := s.readsOrUnavailable()
	if err != nil {
		return 0, nil, err
	}
	aq, ps := s.availabilityQuery(q)
	if len(ps) > 0 {
		return 0, nil, badRequest(ps)
	}
	key := fmt.Sprintf("availability|%v|%d|%d|%d", aq.Types, aq.From.Unix(), aq.To.Unix(), aq.Step/time.Second)
	return s.cached(q, key, true, func() (any, error) {
		av, err := svc.Availability(q.r.Context(), aq)
		if err != nil {
			return nil, err
		}
		if q.tok.Scope != token.Admin {
			av = redact(av)
		}
		return av, nil
	})
}

// availabilityQuery parses the availability route's query and bounds its
// answer: at most maxSteps steps, maxTypes types, and maxBuckets steps
// times types (every type of the pool when none is named).
func (s *Server) availabilityQuery(q *req) (reserve.AvailabilityQuery, reserve.Problems) {
	now := s.now().Truncate(time.Second)
	v := q.r.URL.Query()
	types := splitList(v.Get("type"))
	slices.Sort(types)
	aq := reserve.AvailabilityQuery{Types: slices.Compact(types), From: now, To: now.Add(14 * 24 * time.Hour)}
	var ps reserve.Problems
	for k, dst := range map[string]*time.Time{"from": &aq.From, "to": &aq.To} {
		if x := v.Get(k); x != "" {
			t, err := reserve.ParseTime(x, now, reserve.Zone{})
			if err != nil {
				ps = append(ps, reserve.Problem{Field: k, Msg: err.Error()})
			}
			*dst = t
		}
	}
	if v.Get("to") == "" {
		aq.To = aq.From.Add(14 * 24 * time.Hour)
	}
	aq.Step = 24 * time.Hour
	if aq.To.Sub(aq.From) <= 48*time.Hour {
		aq.Step = time.Hour
	}
	if x := v.Get("step"); x != "" {
		d, err := reserve.ParseDuration(x)
		if err != nil {
			ps = append(ps, reserve.Problem{Field: "step", Msg: err.Error()})
		}
		aq.Step = d
	}
	if len(aq.Types) > maxTypes {
		ps = append(ps, reserve.Problem{Field: "type", Msg: fmt.Sprintf("%d types; at most %d in one request", len(aq.Types), maxTypes)})
	}
	if len(ps) > 0 || aq.Step < time.Second || !aq.To.After(aq.From) {
		return aq, ps // the service names what is wrong with the window and step
	}
	steps := int64((aq.To.Sub(aq.From) + aq.Step - 1) / aq.Step)
	ntypes := int64(len(aq.Types))
	if ntypes == 0 && q.snap != nil {
		ntypes = int64(len(q.snap.Pool))
	}
	ntypes = max(ntypes, 1)
	switch {
	case steps > maxSteps:
		ps = append(ps, reserve.Problem{Field: "step", Msg: fmt.Sprintf("%s over %s is %d steps; at most %d in one answer: use a longer step or a shorter from..to",
			reserve.FormatDuration(aq.Step), reserve.FormatDuration(aq.To.Sub(aq.From)), steps, maxSteps)})
	case steps*ntypes > maxBuckets:
		ps = append(ps, reserve.Problem{Field: "step", Msg: fmt.Sprintf("%d steps of %d types is %d; at most %d in one answer: name fewer types (type=), use a longer step or a shorter from..to",
			steps, ntypes, steps*ntypes, maxBuckets)})
	}
	return aq, ps
}

// slotRequest reads the slots route's query into the query find slot
// builds of its key=value arguments (for the path's tenant).
func (s *Server) slotRequest(q *req) (reserve.SlotQuery, error) {
	v := q.r.URL.Query()
	sq := reserve.SlotQuery{Type: v.Get("type"), Tenant: q.tenant, Limit: 3}
	var ps reserve.Problems
	if x := v.Get("count"); x != "" {
		n, err := strconv.Atoi(x)
		if err != nil {
			ps = append(ps, reserve.Problem{Field: "count", Msg: fmt.Sprintf("%q is not a whole number", x)})
		}
		sq.Count = n
	} else {
		ps = append(ps, reserve.Problem{Field: "count", Msg: "required: how many GPUs (or nodes)"})
	}
	if x := v.Get("duration"); x != "" {
		d, err := reserve.ParseDuration(x)
		if err != nil {
			ps = append(ps, reserve.Problem{Field: "duration", Msg: err.Error()})
		}
		sq.Duration = d
	}
	if x := v.Get("after"); x != "" {
		t, err := reserve.ParseTime(x, s.now(), reserve.Zone{})
		if err != nil {
			ps = append(ps, reserve.Problem{Field: "after", Msg: err.Error()})
		}
		sq.After = t
	}
	if n, ok := queryInt(q.r, "limit", 3); !ok || n < 1 || n > 100 {
		ps = append(ps, reserve.Problem{Field: "limit", Msg: "a whole number from 1 to 100"})
	} else {
		sq.Limit = n
	}
	if len(ps) > 0 {
		return sq, badRequest(ps)
	}
	return sq, nil
}

// slots finds the tenant's earliest windows through the booking use
// cases (Bookings.FindSlots, what find slot runs), from the cache.
func (s *Server) slots(q *req) (int, any, error) {
	svc, err := s.readsOrUnavailable()
	if err != nil {
		return 0, nil, err
	}
	sq, err := s.slotRequest(q)
	if err != nil {
		return 0, nil, err
	}
	key := fmt.Sprintf("slots|%s|%s|%d|%d|%d|%d", q.tenant, sq.Type, sq.Count, sq.Duration/time.Second, sq.After.Unix(), sq.Limit)
	return s.cached(q, key, true, func() (any, error) {
		slots, err := svc.FindSlots(q.r.Context(), sq)
		if err != nil {
			return nil, err
		}
		if slots == nil {
			slots = []reserve.Slot{}
		}
		return map[string]any{"tenant": q.tenant, "slots": slots}, nil
	})
}
