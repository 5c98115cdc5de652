package store

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// Memory is an in-memory Store. Atomic serialises every transaction (a
// superset of per-resource locks) and undoes fn's writes when it fails.
type Memory struct {
	mu       sync.Mutex
	bookings map[int64]reserve.Booking
	res      map[int64]reserve.Resource // each booking's resource
	// order is the bookings by start then id, with their resources: a
	// cache rebuilt on the first read after a write.
	order    []reserve.Booking
	orderRes []reserve.Resource
	maint    map[int64]reserve.Maintenance
	nextID   int64
	nextM    int64
	audit    []sqldb.AuditEntry
	// placements is each booking's history of Held.Nodes (Placements).
	placements map[int64][]reserve.Placement
	now        func() time.Time
}

var _ reserve.Store = (*Memory)(nil)

// NewMemory returns an empty store.
func NewMemory() *Memory {
	return &Memory{bookings: map[int64]reserve.Booking{}, res: map[int64]reserve.Resource{}, maint: map[int64]reserve.Maintenance{}, now: time.Now}
}

// WithClock sets the clock of audit rows.
func (m *Memory) WithClock(now func() time.Time) *Memory { m.now = now; return m }

// Audit returns the audit rows written so far.
func (m *Memory) Audit() []sqldb.AuditEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.audit)
}

// Atomic runs fn under the store's one lock.
func (m *Memory) Atomic(ctx context.Context, _ []reserve.Resource, fn func(reserve.Tx) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	saved := struct {
		b     map[int64]reserve.Booking
		r     map[int64]reserve.Resource
		mt    map[int64]reserve.Maintenance
		id, n int64
		audit int
	}{maps.Clone(m.bookings), maps.Clone(m.res), maps.Clone(m.maint), m.nextID, m.nextM, len(m.audit)}
	if err := fn(memTx{m}); err != nil {
		m.bookings, m.res, m.maint, m.nextID, m.nextM, m.audit = saved.b, saved.r, saved.mt, saved.id, saved.n, m.audit[:saved.audit]
		m.order = nil
		return err
	}
	return nil
}

func (m *Memory) get(id int64) (reserve.Booking, error) {
	b, ok := m.bookings[id]
	if !ok {
		return reserve.Booking{}, fmt.Errorf("booking %d: %w", id, reserve.ErrNotFound)
	}
	return clone(b), nil
}

func clone(b reserve.Booking) reserve.Booking {
	b.Held.Nodes = slices.Clone(b.Held.Nodes)
	b.PerNode = maps.Clone(b.PerNode) // nil stays nil: not recorded
	return b
}

func (m *Memory) list(f reserve.Filter) []reserve.Booking {
	if m.order == nil {
		m.order = slices.Collect(maps.Values(m.bookings))
		slices.SortFunc(m.order, func(a, b reserve.Booking) int {
			if c := a.Start.Compare(b.Start); c != 0 {
				return c
			}
			return int(a.ID - b.ID)
		})
		m.orderRes = make([]reserve.Resource, len(m.order))
		for i, b := range m.order {
			m.orderRes[i] = m.res[b.ID]
		}
	}
	var res map[reserve.Resource]bool
	if len(f.Resources) > 0 {
		res = make(map[reserve.Resource]bool, len(f.Resources))
		for _, r := range f.Resources {
			res[r] = true
		}
	}
	out := make([]reserve.Booking, 0, len(m.order))
	for i := range m.order {
		if res != nil && !res[m.orderRes[i]] {
			continue
		}
		b := &m.order[i]
		if len(f.IDs) > 0 && !slices.Contains(f.IDs, b.ID) {
			continue
		}
		if f.Tenant != "" && b.Tenant != f.Tenant {
			continue
		}
		if !f.From.IsZero() || !f.To.IsZero() {
			s, e := b.Span()
			if !e.After(s) || !f.From.IsZero() && !e.After(f.From) || !f.To.IsZero() && !s.Before(f.To) {
				continue
			}
		}
		out = append(out, clone(*b))
	}
	if len(out) == 0 {
		return nil
	}
	return slices.Clip(out)
}

func (m *Memory) maintList() []reserve.Maintenance {
	out := slices.Collect(maps.Values(m.maint))
	slices.SortFunc(out, func(a, b reserve.Maintenance) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return int(a.ID - b.ID)
	})
	return out
}

func (m *Memory) record(actor, action, kind string, id int64, before, after any) {
	e := sqldb.AuditEntry{ID: int64(len(m.audit) + 1), At: m.now().UTC(), Actor: actor, Action: action, ObjectKind: kind, ObjectName: strconv.FormatInt(id, 10)}
	for _, p := range []struct {
		v   any
		dst **string
	}{{before, &e.Before}, {after, &e.After}} {
		if p.v != nil {
			b, _ := json.Marshal(p.v)
			s := string(b)
			*p.dst = &s
		}
	}
	m.audit = append(m.audit, e)
}

// Get returns one booking.
func (m *Memory) Get(_ context.Context, id int64) (reserve.Booking, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.get(id)
}

// List returns the bookings f selects.
func (m *Memory) List(_ context.Context, f reserve.Filter) ([]reserve.Booking, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.list(f), nil
}

// Maintenance returns every maintenance window.
func (m *Memory) Maintenance(context.Context) ([]reserve.Maintenance, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.maintList(), nil
}

// Stored counts the bookings ever stored.
func (m *Memory) Stored(context.Context) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.bookings), nil
}

// Project records the projector's view of a booking.
func (m *Memory) Project(_ context.Context, actor string, id int64, state reserve.State, held reserve.Held, note string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, err := m.get(id)
	if err != nil {
		return err
	}
	next := cur
	if !cur.Cancelled() {
		next.State = state
	}
	next.Held, next.Note = held, clip(note, 1024)
	next.Held.Nodes = slices.Clone(held.Nodes)
	// As DB.recordPlacement: a new row when the booking is on other nodes
	// than its last row says; an empty node list is no placement.
	if ps, placed := m.placements[id], next.Held.Placed(); len(placed) > 0 && (len(ps) == 0 || !slices.Equal(ps[len(ps)-1].Nodes, placed)) {
		if m.placements == nil {
			m.placements = map[int64][]reserve.Placement{}
		}
		since := m.now().UTC().Truncate(time.Microsecond)
		if n := len(ps); n > 0 && ps[n-1].Since.Equal(since) {
			ps = ps[:n-1]
		}
		m.placements[id] = append(ps, reserve.Placement{Since: since, Nodes: slices.Clone(placed)})
	}
	if next.State != cur.State || !heldEqual(next.Held, cur.Held) || next.Note != cur.Note {
		next.Version++ // as DB.Project: a change of the row is a new version
	}
	m.bookings[id] = next
	m.order = nil
	if next.State != cur.State || !heldSameWindow(next.Held, cur.Held) {
		m.record(actor, "project", AuditBooking, id, cur, next)
	}
	return nil
}

// Placements implements reserve.Store.
func (m *Memory) Placements(context.Context) (map[int64][]reserve.Placement, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[int64][]reserve.Placement, len(m.placements))
	for id, ps := range m.placements {
		for _, p := range ps {
			out[id] = append(out[id], reserve.Placement{Since: p.Since, Nodes: slices.Clone(p.Nodes)})
		}
	}
	return out, nil
}

type memTx struct{ m *Memory }

func (t memTx) Get(_ context.Context, id int64) (reserve.Booking, error) { return t.m.get(id) }

func (t memTx) Bookings(_ context.Context, f reserve.Filter) ([]reserve.Booking, error) {
	return t.m.list(f), nil
}

func (t memTx) Maintenance(context.Context) ([]reserve.Maintenance, error) {
	return t.m.maintList(), nil
}

func (t memTx) Insert(_ context.Context, actor string, b reserve.Booking) (reserve.Booking, error) {
	t.m.nextID++
	b.ID, b.Version = t.m.nextID, 0
	b.Start, b.End, b.CreatedAt, b.UpdatedAt = b.Start.UTC(), b.End.UTC(), b.CreatedAt.UTC().Truncate(time.Microsecond), b.UpdatedAt.UTC().Truncate(time.Microsecond)
	t.m.bookings[b.ID] = clone(b)
	t.m.res[b.ID] = b.Resource()
	t.m.order = nil
	t.m.record(actor, "create", AuditBooking, b.ID, nil, b)
	return b, nil
}

func (t memTx) Update(_ context.Context, actor, action string, b reserve.Booking) error {
	cur, err := t.m.get(b.ID)
	if err != nil {
		return err
	}
	if cur.Version != b.Version {
		return changed(b.ID, b.Version, cur.Version)
	}
	next := cur
	next.Version++
	next.Count, next.Start, next.End, next.Purpose, next.State = b.Count, b.Start.UTC(), b.End.UTC(), b.Purpose, b.State
	next.PerNode = maps.Clone(b.PerNode)
	next.UpdatedAt, next.CancelledAt, next.CancelledBy = b.UpdatedAt.UTC().Truncate(time.Microsecond), b.CancelledAt.UTC().Truncate(time.Microsecond), b.CancelledBy
	if b.CancelledAt.IsZero() {
		next.CancelledAt = time.Time{}
	}
	t.m.bookings[b.ID] = next
	t.m.order = nil
	t.m.record(actor, action, AuditBooking, b.ID, cur, next)
	return nil
}

func (t memTx) InsertMaintenance(_ context.Context, actor string, mt reserve.Maintenance) (reserve.Maintenance, error) {
	t.m.nextM++
	mt.ID = t.m.nextM
	mt.Start, mt.End, mt.CreatedAt = mt.Start.UTC(), mt.End.UTC(), mt.CreatedAt.UTC().Truncate(time.Microsecond)
	mt.Nodes = slices.Clone(mt.Nodes)
	t.m.maint[mt.ID] = mt
	t.m.record(actor, "create", AuditMaintenance, mt.ID, nil, mt)
	return mt, nil
}

func (t memTx) DeleteMaintenance(_ context.Context, actor string, id int64) (reserve.Maintenance, error) {
	mt, ok := t.m.maint[id]
	if !ok {
		return reserve.Maintenance{}, fmt.Errorf("maintenance window %d: %w", id, reserve.ErrNotFound)
	}
	delete(t.m.maint, id)
	t.m.record(actor, "delete", AuditMaintenance, id, mt, nil)
	return mt, nil
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }
