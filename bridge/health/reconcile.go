package health

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// observe moves records by what slurmctld reports (new nodes, outside
// drains, nodes back from them).
func (s *Service) observe(ctx context.Context, st *snapshot, rep *Report) {
	for _, name := range sortedKeys(st.slurm) {
		sn := st.slurm[name]
		var rec *Node
		if r, ok := st.recs[name]; ok {
			rec = &r
		}
		next, ev := Observe(rec, sn, s.now(), s.Settings.Policy)
		if ev == nil {
			continue
		}
		stored, err := s.Store.PutNode(ctx, next, ev)
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		st.recs[name] = stored
		rep.Events = append(rep.Events, *ev)
		s.Logger.Info("health: node state", "node", name, "from", ev.From, "to", ev.To, "reason", ev.Reason)
	}
}

// reconcile makes Slurm match the records of the nodes (all managed nodes
// when only is nil).
func (s *Service) reconcile(ctx context.Context, st *snapshot, rep *Report, only []string) {
	for _, name := range sortedKeys(st.slurm) {
		if only != nil && !slices.Contains(only, name) {
			continue
		}
		rec, ok := st.recs[name]
		if !ok {
			continue
		}
		sn := st.slurm[name]
		for _, a := range Reconcile(rec, sn, st.fences[name], st.checking(name)) {
			if err := s.act(ctx, a); err != nil {
				rep.Errors = append(rep.Errors, fmt.Sprintf("%s %s: %v", a.Kind, name, err))
				break // the later actions depend on this one
			}
			rep.Actions = append(rep.Actions, a)
			switch a.Kind {
			case ActFence:
				st.fences[name] = true
			case ActUnfence:
				delete(st.fences, name)
			case ActDrain:
				sn.Drain, sn.Reason = true, a.Reason
			case ActResume:
				sn.Drain, sn.Down, sn.Reason = false, false, ""
			}
			st.slurm[name] = sn
		}
	}
}

func (s *Service) act(ctx context.Context, a Action) error {
	s.Logger.Info("health: slurm", "action", a.Kind, "node", a.Node, "reason", a.Reason)
	switch a.Kind {
	case ActFence:
		return s.Nodes.Fence(ctx, a.Node)
	case ActUnfence:
		return s.Nodes.Unfence(ctx, a.Node)
	case ActDrain:
		return s.Nodes.Drain(ctx, a.Node, a.Reason)
	case ActDown:
		return s.Nodes.Down(ctx, a.Node, a.Reason)
	case ActResume:
		return s.Nodes.Resume(ctx, a.Node)
	}
	return fmt.Errorf("unknown action %q", a.Kind)
}

// pollEvery is how often settle asks slurmctld whether a job started.
const pollEvery = 2 * time.Second

// settle resumes the held nodes whose acceptance runs wait to start (their
// reservation keeps tenants off), waits up to StartWait for those jobs to
// start, and drains the nodes again.
func (s *Service) settle(ctx context.Context, st *snapshot, rep *Report) {
	var nodes []string
	var ids []int64
	for _, r := range st.inflight {
		if r.Held && st.checking(r.Node) {
			nodes = append(nodes, r.Node)
			ids = append(ids, r.JobID)
		}
	}
	if len(nodes) == 0 {
		return
	}
	s.reconcile(ctx, st, rep, nodes)
	deadline := s.now().Add(s.Settings.StartWait)
	for {
		js, err := s.Jobs.States(ctx, ids)
		if err != nil {
			rep.Errors = append(rep.Errors, "read check jobs: "+err.Error())
			break
		}
		maps(st.jobs, js)
		waiting := false
		for _, id := range ids {
			if j, ok := js[id]; ok && j.Pending() {
				waiting = true
			}
		}
		if !waiting || !s.now().Before(deadline) {
			break
		}
		if err := s.sleep(ctx, pollEvery); err != nil {
			break
		}
	}
	// A node whose job still waits stays resumed behind its reservation;
	// the next cycle drains it once the job has started.
	s.reconcile(ctx, st, rep, nodes)
}
