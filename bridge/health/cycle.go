package health

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// releaseSettle is how long after a node's return to service its bookings
// are re-projected a second time.
const releaseSettle = 5 * time.Second

// Report is what one cycle did.
type Report struct {
	Schedule  string    `json:"schedule"`
	At        time.Time `json:"at"`
	Finished  []Run     `json:"finished,omitempty"`
	Submitted []Run     `json:"submitted,omitempty"`
	Events    []Event   `json:"events,omitempty"`
	Actions   []Action  `json:"actions,omitempty"`
	// Skipped says why nodes got no run this cycle (node: why).
	Skipped map[string]string `json:"skipped,omitempty"`
	Pruned  int64             `json:"pruned,omitempty"`
	// Bookings are what the booking projector did after nodes were held
	// or released (Mover), one line per booking.
	Bookings []string `json:"bookings,omitempty"`
	Errors   []string `json:"errors,omitempty"`
}

func (r *Report) skip(node, why string) {
	if r.Skipped == nil {
		r.Skipped = map[string]string{}
	}
	r.Skipped[node] = why
}

// Cycle runs one cycle of a schedule: it harvests finished runs, moves the
// lifecycle, makes Slurm match the records, submits the schedule's checks
// (acceptance runs on held nodes, or the schedule's checks on nodes in
// service) within the cap, and prunes old evidence. Errors on one node do
// not stop the others; they are returned together at the end.
func (s *Service) Cycle(ctx context.Context, schedule string) (Report, error) {
	sched, err := s.schedule(schedule)
	if err != nil {
		return Report{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rep := Report{Schedule: sched.Name, At: s.now()}
	st, err := s.load(ctx)
	if err != nil {
		return rep, err
	}
	s.harvest(ctx, st, &rep)
	if st.recs, err = s.Store.Nodes(ctx); err != nil {
		return rep, err
	}
	s.observe(ctx, st, &rep)
	s.reconcile(ctx, st, &rep, nil)
	s.submitSchedule(ctx, st, sched, &rep)
	s.settle(ctx, st, &rep)
	s.reproject(ctx, &rep)
	if s.Settings.Retention > 0 {
		n, err := s.Store.Prune(ctx, rep.At.Add(-s.Settings.Retention))
		if err != nil {
			rep.Errors = append(rep.Errors, err.Error())
		}
		rep.Pruned = n
	}
	s.observeStates(st)
	if len(rep.Errors) > 0 {
		return rep, fmt.Errorf("health cycle %s: %s", sched.Name, strings.Join(rep.Errors, "; "))
	}
	return rep, nil
}

// Harvest finishes the runs whose jobs ended and moves the lifecycle,
// without submitting anything (the CLI's wait).
func (s *Service) Harvest(ctx context.Context) (Report, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rep := Report{Schedule: "harvest", At: s.now()}
	st, err := s.load(ctx)
	if err != nil {
		return rep, err
	}
	s.harvest(ctx, st, &rep)
	if st.recs, err = s.Store.Nodes(ctx); err != nil {
		return rep, err
	}
	s.observe(ctx, st, &rep)
	s.reconcile(ctx, st, &rep, nil)
	s.reproject(ctx, &rep)
	s.observeStates(st)
	if len(rep.Errors) > 0 {
		return rep, fmt.Errorf("health harvest: %s", strings.Join(rep.Errors, "; "))
	}
	return rep, nil
}

// servesTenants reports whether a node in state st takes tenants' jobs
// (a node without a record did, before gpubridge managed it).
func servesTenants(st State) bool { return st == "" || st.InService() }

// reproject hands the nodes whose service changed in this report (held,
// released, taken over by a person) to the Mover, after Slurm has been
// changed, so that bookings on them are marked at risk or moved now; a
// node returned to service goes along once more releaseSettle later.
func (s *Service) reproject(ctx context.Context, rep *Report) {
	if s.Mover == nil {
		return
	}
	now := s.now()
	var nodes []string
	for n, at := range s.again {
		if !now.Before(at.Add(releaseSettle)) {
			nodes = append(nodes, n)
			delete(s.again, n)
		}
	}
	for _, e := range rep.Events {
		if servesTenants(e.From) != servesTenants(e.To) && !slices.Contains(nodes, e.Node) {
			nodes = append(nodes, e.Node)
		}
		if !servesTenants(e.From) && servesTenants(e.To) {
			if s.again == nil {
				s.again = map[string]time.Time{}
			}
			s.again[e.Node] = now
		} else {
			delete(s.again, e.Node)
		}
	}
	if len(nodes) == 0 {
		return
	}
	slices.Sort(nodes)
	lines, err := s.Mover.Reproject(ctx, nodes)
	rep.Bookings = append(rep.Bookings, lines...)
	s.Logger.Info("health: bookings re-projected", "nodes", strings.Join(nodes, ","), "did", strings.Join(lines, "; "), "error", err)
	if err != nil {
		rep.Errors = append(rep.Errors, fmt.Sprintf("bookings on %s: %v", strings.Join(nodes, ","), err))
	}
}

func (s *Service) observeStates(st *snapshot) {
	if s.Observer == nil {
		return
	}
	counts := map[State]int{}
	for name, r := range st.recs {
		if s.managed(name) {
			counts[r.State]++
		}
	}
	s.Observer.NodeStates(counts)
}
