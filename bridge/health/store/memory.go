package store

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health"
)

// Memory is an in-memory health.Store for tests; it passes the same
// conformance suite as DB.
type Memory struct {
	mu       sync.Mutex
	nodes    map[string]health.Node
	runs     []health.Run
	evidence map[int64][]byte
	results  []health.StoredResult
	events   []health.Event
	audits   []health.Override
	lastRun  int64
}

var _ health.Store = (*Memory)(nil)

// NewMemory returns an empty store.
func NewMemory() *Memory {
	return &Memory{nodes: map[string]health.Node{}, evidence: map[int64][]byte{}}
}

// Nodes returns every record.
func (m *Memory) Nodes(context.Context) (map[string]health.Node, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]health.Node, len(m.nodes))
	for k, v := range m.nodes {
		out[k] = cloneNode(v)
	}
	return out, nil
}

func cloneNode(n health.Node) health.Node {
	n.Checks = slices.Clone(n.Checks)
	return n
}

func (m *Memory) putLocked(n health.Node) (health.Node, error) {
	cur, ok := m.nodes[n.Name]
	switch {
	case n.Version == 0 && ok, n.Version != 0 && (!ok || cur.Version != n.Version):
		return health.Node{}, fmt.Errorf("node %s: %w", n.Name, health.ErrConflict)
	}
	n = cloneNode(n)
	n.Since = n.Since.UTC().Truncate(time.Microsecond)
	n.Version++
	m.nodes[n.Name] = n
	return cloneNode(n), nil
}

func (m *Memory) eventLocked(ev health.Event) {
	ev.ID = int64(len(m.events) + 1)
	ev.At = ev.At.UTC().Truncate(time.Microsecond)
	m.events = append(m.events, ev)
}

// PutNode writes a record and its event.
func (m *Memory) PutNode(_ context.Context, n health.Node, ev *health.Event) (health.Node, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out, err := m.putLocked(n)
	if err != nil {
		return out, err
	}
	if ev != nil {
		m.eventLocked(*ev)
	}
	return out, nil
}

// CreateRun stores a new run.
func (m *Memory) CreateRun(_ context.Context, r health.Run) (health.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.createRun(r)
}

// CreateTenantRun stores a tenant's run while it is under max runs since
// since (counted and stored under one lock).
func (m *Memory) CreateTenantRun(_ context.Context, r health.Run, since time.Time, max int) (health.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n := m.tenantRuns(r.Tenant, since); n >= max {
		return health.Run{}, health.TenantCapError(r.Tenant, n, max)
	}
	return m.createRun(r)
}

func (m *Memory) createRun(r health.Run) (health.Run, error) {
	for _, o := range m.runs {
		if o.Key == r.Key {
			return health.Run{}, fmt.Errorf("run key %s exists", r.Key)
		}
	}
	m.lastRun++
	r.ID = m.lastRun
	r.State = health.RunSubmitting
	r.RequestedAt = r.RequestedAt.UTC().Truncate(time.Microsecond)
	r.Checks = slices.Clone(r.Checks)
	r.Peers = slices.Clone(r.Peers)
	m.runs = append(m.runs, r)
	return r, nil
}

func (m *Memory) runLocked(id int64) (*health.Run, error) {
	for i := range m.runs {
		if m.runs[i].ID == id {
			return &m.runs[i], nil
		}
	}
	return nil, fmt.Errorf("run %d: %w", id, health.ErrNotFound)
}

// SetRunJob records the run's job.
func (m *Memory) SetRunJob(_ context.Context, id, jobID int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.runLocked(id)
	if err != nil {
		return err
	}
	if r.State != health.RunSubmitting && r.State != health.RunSubmitted {
		return fmt.Errorf("run %d is %s", id, r.State)
	}
	r.JobID, r.State = jobID, health.RunSubmitted
	return nil
}

// InFlight returns the unfinished runs, oldest first.
func (m *Memory) InFlight(context.Context) ([]health.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []health.Run
	for _, r := range m.runs {
		if r.State == health.RunSubmitting || r.State == health.RunSubmitted {
			r.Checks = slices.Clone(r.Checks)
			r.Peers = slices.Clone(r.Peers)
			out = append(out, r)
		}
	}
	return out, nil
}

// FinishRun writes a finished run with its results and records.
func (m *Memory) FinishRun(_ context.Context, f health.Finish) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.runLocked(f.Run.ID)
	if err != nil {
		return false, err
	}
	if r.State != health.RunSubmitting && r.State != health.RunSubmitted {
		return false, nil
	}
	for _, n := range f.Nodes {
		cur, ok := m.nodes[n.Name]
		if (n.Version == 0 && ok) || (n.Version != 0 && (!ok || cur.Version != n.Version)) {
			return false, fmt.Errorf("node %s: %w", n.Name, health.ErrConflict)
		}
	}
	for _, n := range f.Nodes {
		if _, err := m.putLocked(n); err != nil {
			return false, err
		}
	}
	for _, ev := range f.Events {
		m.eventLocked(ev)
	}
	r.State, r.FinishedAt, r.Note = f.Run.State, f.Run.FinishedAt.UTC().Truncate(time.Microsecond), f.Run.Note
	if len(f.Evidence) > 0 {
		m.evidence[r.ID] = slices.Clone(f.Evidence)
	}
	for _, res := range f.Results {
		res.At = res.At.UTC().Truncate(time.Microsecond)
		res.Values = slices.Clone(res.Values)
		m.results = append(m.results, res)
	}
	return true, nil
}

// Run returns one run.
func (m *Memory) Run(_ context.Context, id int64) (health.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.runLocked(id)
	if err != nil {
		return health.Run{}, err
	}
	out := *r
	out.Checks = slices.Clone(out.Checks)
	return out, nil
}

// Evidence returns a run's stored output.
func (m *Memory) Evidence(_ context.Context, id int64) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.runLocked(id); err != nil {
		return nil, err
	}
	return slices.Clone(m.evidence[id]), nil
}

// Results returns results, newest first.
func (m *Memory) Results(_ context.Context, f health.ResultFilter) ([]health.StoredResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []health.StoredResult
	for i := len(m.results) - 1; i >= 0; i-- {
		r := m.results[i]
		switch {
		case f.Node != "" && r.Node != f.Node, f.Check != "" && r.Check != f.Check, f.Tenant != "" && r.Tenant != f.Tenant,
			f.VisibleTo != "" && r.Tenant != "" && r.Tenant != f.VisibleTo,
			f.RunID != 0 && r.RunID != f.RunID, !f.Since.IsZero() && r.At.Before(f.Since):
			continue
		}
		r.Values = slices.Clone(r.Values)
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.After(out[j].At)
		}
		if out[i].RunID != out[j].RunID {
			return out[i].RunID > out[j].RunID
		}
		return false
	})
	limit := f.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Events returns a node's events since a time, oldest first.
func (m *Memory) Events(_ context.Context, node string, since time.Time) ([]health.Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []health.Event
	for _, e := range m.events {
		if (node == "" || e.Node == node) && !e.At.Before(since) {
			out = append(out, e)
		}
	}
	return out, nil
}

// TenantRuns counts a tenant's runs since a time.
func (m *Memory) TenantRuns(_ context.Context, tenant string, since time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tenantRuns(tenant, since), nil
}

func (m *Memory) tenantRuns(tenant string, since time.Time) int {
	n := 0
	for _, r := range m.runs {
		if r.Tenant == tenant && !r.RequestedAt.Before(since) {
			n++
		}
	}
	return n
}

// Override writes an admin's change with its audit row.
func (m *Memory) Override(_ context.Context, o health.Override) (health.Node, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.putLocked(o.Node)
	if err != nil {
		return n, err
	}
	m.eventLocked(o.Event)
	m.audits = append(m.audits, o)
	return n, nil
}

// Audits returns the overrides written (tests).
func (m *Memory) Audits() []health.Override {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.audits)
}

// Prune deletes finished runs (with results and evidence) finished before
// a time.
func (m *Memory) Prune(_ context.Context, before time.Time) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	gone := map[int64]bool{}
	keep := m.runs[:0]
	for _, r := range m.runs {
		if (r.State == health.RunDone || r.State == health.RunAborted) && r.FinishedAt.Before(before) {
			gone[r.ID] = true
			delete(m.evidence, r.ID)
			continue
		}
		keep = append(keep, r)
	}
	m.runs = keep
	res := m.results[:0]
	for _, r := range m.results {
		if !gone[r.RunID] {
			res = append(res, r)
		}
	}
	m.results = res
	return int64(len(gone)), nil
}

// defaultLimit is Results' limit when the filter sets none.
const defaultLimit = 200
