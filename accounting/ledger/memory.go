package ledger

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/interval"
)

// Memory is an in-memory ledger for tests. It keeps the same rules as DB
// (insert-only lines, revisions, booking, watermark) without persistence.
type Memory struct {
	mu       sync.Mutex
	clusters map[string]*memCluster
	locks    map[string]chan struct{}
	audits   []AuditRecord
}

type memCluster struct {
	lines      []meter.Line
	keys       map[meter.UsageKey]keyState
	byRun      map[meter.RunKey][]meter.UsageKey
	accruals   []meter.Line
	accrualsAt int64
	watermarks map[string]meter.Watermark
	coverage   interval.Set
	touched    interval.Set
	periods    map[meter.Period]PeriodRecord
	passes     map[[2]string]meter.Pass // by source, kind
	credits    map[string]Credit        // by key
	charges    []meter.Line             // booking charges (booking.go)
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{clusters: map[string]*memCluster{}, locks: map[string]chan struct{}{}}
}

func (m *Memory) cluster(name string) *memCluster {
	c, ok := m.clusters[name]
	if !ok {
		c = &memCluster{keys: map[meter.UsageKey]keyState{}, byRun: map[meter.RunKey][]meter.UsageKey{}, watermarks: map[string]meter.Watermark{}, periods: map[meter.Period]PeriodRecord{},
			passes: map[[2]string]meter.Pass{}}
		m.clusters[name] = c
	}
	return c
}

func (c *memCluster) closed() booker {
	b := booker{}
	for p := range c.periods {
		b[p] = true
	}
	return b
}

// insert appends lines, refusing a duplicate key like the database does.
func (c *memCluster) insert(lines []meter.Line, st *meter.WriteStats) error {
	for _, l := range lines {
		k := l.Key()
		s, ok := c.keys[k]
		if ok && l.Revision <= s.MaxRev || !ok && l.Revision != 0 {
			return fmt.Errorf("insert ledger line %v rev %d: duplicate or out-of-order revision", k, l.Revision)
		}
	}
	for _, l := range lines {
		k := l.Key()
		s, ok := c.keys[k]
		if !ok {
			s.FirstFrom, s.Booking = l.Start, l.Booking
			c.byRun[k.Run] = append(c.byRun[k.Run], k)
		}
		s.Sum += l.GPUSeconds
		s.MaxRev = l.Revision
		c.keys[k] = s
		c.lines = append(c.lines, l)
		countLine(l, st)
	}
	return nil
}

func countLine(l meter.Line, st *meter.WriteStats) {
	st.Lines++
	if l.Revision > 0 {
		st.Corrections++
	}
	if l.Booked != l.Period {
		st.Adjustments++
	}
}

func (c *memCluster) existing(runs []meter.MeasuredRun) runKeys {
	out := runKeys{}
	for _, r := range runs {
		for _, k := range c.byRun[r.Run.Key] {
			out[r.Run.Key] = append(out[r.Run.Key], existingKey{Period: k.Period, Tier: k.Tier, Type: k.Type, keyState: c.keys[k]})
		}
	}
	return out
}

// ApplyBatch: see the method list in store.go.
func (m *Memory) ApplyBatch(_ context.Context, cluster string, asOf int64, b meter.Batch) (meter.WriteStats, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.cluster(cluster)
	st := meter.WriteStats{Runs: len(b.Runs), Checked: len(b.Runs)}
	lines := planLines(b.Runs, c.existing(b.Runs), c.closed())
	if err := c.insert(lines, &st); err != nil {
		return meter.WriteStats{}, err
	}
	if !b.CheckAll {
		c.touched = c.touched.Add(b.Touch)
		c.coverage = c.coverage.Add(interval.Interval{Start: b.From, End: b.Covered()})
		c.advance(b)
	}
	return st, nil
}

func (c *memCluster) advance(b meter.Batch) {
	if b.Source == "" || b.Through <= b.From && b.After == 0 {
		return
	}
	w, ok := c.watermarks[b.Source]
	if ok && b.From > w.Through {
		return // a window after a gap does not move the watermark
	}
	if !ok || b.Through > w.Through || b.Through == w.Through && b.After > w.After {
		c.watermarks[b.Source] = meter.Watermark{Source: b.Source, Through: b.Through, After: b.After}
	}
}

// ReplaceAccruals: see the method list in store.go.
func (m *Memory) ReplaceAccruals(_ context.Context, cluster string, asOf int64, runs []meter.MeasuredRun) (meter.WriteStats, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.cluster(cluster)
	st := meter.WriteStats{Runs: len(runs), Checked: len(runs)}
	if err := c.insert(planLines(runs, c.existing(runs), c.closed()), &st); err != nil {
		return meter.WriteStats{}, err
	}
	c.accruals = c.accruals[:0]
	for _, mr := range runs {
		for _, u := range mr.Usages {
			if !u.Final {
				c.accruals = append(c.accruals, meter.Line{Usage: u, Account: mr.Run.Account, User: mr.Run.User, Booked: u.Period})
				st.Accruals++
			}
		}
	}
	c.accrualsAt = asOf
	return st, nil
}

// Watermark: see the method list in store.go.
func (m *Memory) Watermark(_ context.Context, cluster, source string) (meter.Watermark, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w, ok := m.cluster(cluster).watermarks[source]
	return w, ok, nil
}

// State: see the method list in store.go.
func (m *Memory) State(_ context.Context, cluster string) (State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.cluster(cluster)
	return State{
		Watermarks:   maps.Clone(c.watermarks),
		AccrualsAsOf: c.accrualsAt,
		Coverage:     rangePairs(c.coverage),
		Closed:       c.closed(),
		Passes:       sortedPasses(slices.Collect(maps.Values(c.passes))),
	}, nil
}

// Coverage: see the method list in store.go.
func (m *Memory) Coverage(_ context.Context, cluster string) (interval.Set, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.cluster(cluster).coverage), nil
}

// Touched: see the method list in store.go.
func (m *Memory) Touched(_ context.Context, cluster string) (interval.Set, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.cluster(cluster)
	return c.touched.Union(c.coverage), nil
}

// ClosedPeriods: see the method list in store.go.
func (m *Memory) ClosedPeriods(_ context.Context, cluster string) ([]meter.Period, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cluster(cluster).closed().periods(), nil
}

// Audit keeps the entry in memory (Audits returns them).
func (m *Memory) Audit(_ context.Context, cluster string, at time.Time, actor, action, object string, details any) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.audits = append(m.audits, AuditRecord{Cluster: cluster, At: at, Actor: actor, Action: action, Object: object, Details: details})
	return nil
}

// AuditRecord is one entry Memory.Audit kept.
type AuditRecord struct {
	Cluster, Actor, Action, Object string
	At                             time.Time
	Details                        any
}

// Audits returns the entries Audit kept.
func (m *Memory) Audits() []AuditRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.audits)
}

// AccrualRuns: see the method list in store.go.
func (m *Memory) AccrualRuns(_ context.Context, cluster string) ([]meter.RunKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[meter.RunKey]bool{}
	var out []meter.RunKey
	for _, a := range m.cluster(cluster).accruals {
		if !seen[a.Run] {
			seen[a.Run] = true
			out = append(out, a.Run)
		}
	}
	slices.SortFunc(out, meter.RunKey.Compare)
	return out, nil
}

// Pass: see the method list in store.go.
func (m *Memory) Pass(_ context.Context, cluster, source, kind string) (meter.Pass, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.cluster(cluster).passes[[2]string{source, kind}]
	return p, ok, nil
}

// RecordPass: see the method list in store.go.
func (m *Memory) RecordPass(_ context.Context, cluster string, p meter.Pass) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cluster(cluster).passes[[2]string{p.Source, p.Kind}] = p
	return nil
}

// Lines: see the method list in store.go.
func (m *Memory) Lines(_ context.Context, cluster string, q LineQuery, fn func(meter.Line) error) error {
	m.mu.Lock()
	out := matching(m.cluster(cluster).lines, q, func(l meter.Line) meter.Period { return l.Booked })
	m.mu.Unlock()
	return emit(out, q, fn)
}

// Accruals: see the method list in store.go.
func (m *Memory) Accruals(_ context.Context, cluster string, q LineQuery, fn func(meter.Line) error) error {
	m.mu.Lock()
	out := matching(m.cluster(cluster).accruals, q, func(l meter.Line) meter.Period { return l.Period })
	m.mu.Unlock()
	return emit(out, q, fn)
}

// matching copies the lines whose period (as period picks it) is q.Booked
// and whose account is q.Account, when one is given.
func matching(src []meter.Line, q LineQuery, period func(meter.Line) meter.Period) []meter.Line {
	var out []meter.Line
	for _, l := range src {
		if period(l) == q.Booked && (q.Account == "" || l.Account == q.Account) {
			out = append(out, l)
		}
	}
	return out
}

// emit hands lines to fn, in export order when q.Ordered.
func emit(out []meter.Line, q LineQuery, fn func(meter.Line) error) error {
	if q.Ordered {
		slices.SortFunc(out, CompareLines)
	}
	for _, l := range out {
		if err := fn(l); err != nil {
			return err
		}
	}
	return nil
}

// CompareLines is the export order of lines: job id, submit time, usage
// period, tier, type, revision (the order of the ledger's booked-period
// index, so the database streams it without sorting).
func CompareLines(a, b meter.Line) int {
	return cmp.Or(cmp.Compare(a.Run.JobID, b.Run.JobID),
		cmp.Compare(a.Run.Submit, b.Run.Submit), cmp.Compare(a.Period, b.Period),
		cmp.Compare(a.Tier, b.Tier), cmp.Compare(a.Type, b.Type), cmp.Compare(a.Revision, b.Revision))
}

// Period: see the method list in store.go.
func (m *Memory) Period(_ context.Context, cluster string, p meter.Period) (PeriodRecord, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rec, ok := m.cluster(cluster).periods[p]
	return rec, ok, nil
}

// MarkClosed: see the method list in store.go.
func (m *Memory) MarkClosed(_ context.Context, rec PeriodRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.cluster(rec.Cluster)
	if _, ok := c.periods[rec.Period]; ok {
		return fmt.Errorf("close %s: %w", rec.Period, ErrAlreadyClosed)
	}
	c.periods[rec.Period] = rec
	return nil
}

// Lock: see the method list in store.go.
func (m *Memory) Lock(ctx context.Context, cluster string, wait time.Duration) (func(), error) {
	m.mu.Lock()
	ch, ok := m.locks[cluster]
	if !ok {
		ch = make(chan struct{}, 1)
		m.locks[cluster] = ch
	}
	m.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-t.C:
		return nil, ErrLocked
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
