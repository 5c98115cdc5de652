package health

import (
	"context"
	"fmt"
	"slices"
	"sort"
)

// snapshot is one cycle's reading of Slurm and the store.
type snapshot struct {
	slurm    map[string]SlurmNode // managed nodes slurmctld knows
	fences   map[string]bool
	recs     map[string]Node
	inflight []Run
	jobs     map[int64]JobState
}

func (s *Service) load(ctx context.Context) (*snapshot, error) {
	all, err := s.Nodes.Nodes(ctx)
	if err != nil {
		return nil, fmt.Errorf("read nodes: %w", err)
	}
	st := &snapshot{slurm: map[string]SlurmNode{}}
	for _, n := range all {
		if s.managed(n.Name) {
			st.slurm[n.Name] = n
		}
	}
	if st.fences, err = s.Nodes.Fences(ctx); err != nil {
		return nil, fmt.Errorf("read health reservations: %w", err)
	}
	if st.recs, err = s.Store.Nodes(ctx); err != nil {
		return nil, err
	}
	if err := s.loadRuns(ctx, st); err != nil {
		return nil, err
	}
	return st, nil
}

func (s *Service) loadRuns(ctx context.Context, st *snapshot) error {
	var err error
	if st.inflight, err = s.Store.InFlight(ctx); err != nil {
		return err
	}
	var ids []int64
	for _, r := range st.inflight {
		if r.JobID > 0 {
			ids = append(ids, r.JobID)
		}
	}
	st.jobs = map[int64]JobState{}
	if len(ids) > 0 {
		if st.jobs, err = s.Jobs.States(ctx, ids); err != nil {
			return fmt.Errorf("read check jobs: %w", err)
		}
	}
	return nil
}

// runOn returns the run in flight on node.
func (st *snapshot) runOn(node string) (Run, bool) {
	for _, r := range st.inflight {
		if slices.Contains(r.AllNodes(), node) {
			return r, true
		}
	}
	return Run{}, false
}

// checking reports whether an acceptance run waits to start on node.
func (st *snapshot) checking(node string) bool {
	r, ok := st.runOn(node)
	if !ok || !r.Held {
		return false
	}
	if r.JobID == 0 {
		return true
	}
	js, known := st.jobs[r.JobID]
	return known && js.Pending()
}

func maps(dst, src map[int64]JobState) {
	for k, v := range src {
		dst[k] = v
	}
}

// activeRuns counts the runs in flight whose jobs have not ended.
func (st *snapshot) activeRuns() int { return len(st.inflight) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
