package tenantstore

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// Memory is an in-memory tenant store with the MariaDB store's behaviour
// (versions, audit rows, case-insensitive names, all-or-nothing writes),
// for unit tests of the code that uses a store. The conformance suite
// (tenantstoretest) runs both through the same tests.
type Memory struct {
	mu      sync.Mutex
	tenants map[string]tenant.Stored // by lower-cased name
	audit   []sqldb.AuditEntry
	removed map[string]string // tombstones: lower-cased name → name
	now     func() time.Time
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{tenants: map[string]tenant.Stored{}, removed: map[string]string{}, now: time.Now}
}

// WithClock sets the clock (tests).
func (m *Memory) WithClock(now func() time.Time) *Memory { m.now = now; return m }

func (m *Memory) sorted() []tenant.Stored {
	out := make([]tenant.Stored, 0, len(m.tenants))
	for _, t := range m.tenants {
		c := t
		c.Tenant = t.Clone()
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b tenant.Stored) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// List returns every tenant, sorted by name.
func (m *Memory) List(context.Context) ([]tenant.Tenant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.tenants) == 0 {
		return nil, nil
	}
	return tenantsOf(m.sorted()), nil
}

// ListStored is List with versions.
func (m *Memory) ListStored(context.Context) ([]tenant.Stored, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.tenants) == 0 {
		return nil, nil
	}
	return m.sorted(), nil
}

// Get returns one tenant or ErrNotFound.
func (m *Memory) Get(ctx context.Context, name string) (tenant.Tenant, error) {
	st, err := m.GetStored(ctx, name)
	return st.Tenant, err
}

// GetStored is Get with the version.
func (m *Memory) GetStored(_ context.Context, name string) (tenant.Stored, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tenants[strings.ToLower(name)]
	if !ok {
		return tenant.Stored{}, fmt.Errorf("tenant %q: %w", name, ErrNotFound)
	}
	t.Tenant = t.Clone()
	return t, nil
}

// Names returns every tenant name, sorted.
func (m *Memory) Names(context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, t := range m.sorted() {
		out = append(out, t.Name)
	}
	return out, nil
}

// tx runs fn on a copy of the tenants and the audit log, kept only when
// fn succeeds.
func (m *Memory) tx(fn func(ts map[string]tenant.Stored, audit *[]sqldb.AuditEntry) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	ts := make(map[string]tenant.Stored, len(m.tenants))
	for k, v := range m.tenants {
		ts[k] = v
	}
	audit := slices.Clone(m.audit)
	if err := fn(ts, &audit); err != nil {
		return err
	}
	m.tenants, m.audit = ts, audit
	return nil
}

func (m *Memory) record(audit *[]sqldb.AuditEntry, actor, action, name string, before, after any) error {
	e := sqldb.AuditEntry{ID: int64(len(*audit) + 1), At: m.now().UTC(), Actor: actor, Action: action, ObjectKind: AuditKind, ObjectName: name}
	for _, p := range []struct {
		v   any
		dst **string
	}{{before, &e.Before}, {after, &e.After}} {
		if p.v == nil {
			continue
		}
		b, err := json.Marshal(p.v)
		if err != nil {
			return err
		}
		s := string(b)
		*p.dst = &s
	}
	*audit = append(*audit, e)
	return nil
}

func (m *Memory) put(ts map[string]tenant.Stored, audit *[]sqldb.AuditEntry, actor string, t tenant.Tenant) (*Change, error) {
	t = t.Clone()
	t.Normalize()
	prev, exists := ts[strings.ToLower(t.Name)]
	if exists && prev.Name != t.Name {
		return nil, fmt.Errorf("tenant %q: collides with the existing tenant %q (Slurm lower-cases account names)", t.Name, prev.Name)
	}
	if exists && reflect.DeepEqual(prev.Tenant, t) {
		return nil, nil
	}
	c := Change{Name: t.Name, Action: ActionCreate, After: t}
	var b any
	version := int64(1)
	if exists {
		p := prev.Tenant
		c.Action, c.Before, b, version = ActionModify, &p, p, prev.Version+1
	}
	if err := m.record(audit, actor, c.Action, t.Name, b, t); err != nil {
		return nil, err
	}
	ts[strings.ToLower(t.Name)] = tenant.Stored{Tenant: t, Version: version}
	return &c, nil
}

func (m *Memory) markDeleting(ts map[string]tenant.Stored, audit *[]sqldb.AuditEntry, actor string, t tenant.Stored, state tenant.State) error {
	state = DeletionState(t.Tenant, state)
	if t.State == state {
		return nil
	}
	after := t.Clone()
	after.State = state
	if err := m.record(audit, actor, ActionDelete, t.Name, t.Tenant, after); err != nil {
		return err
	}
	ts[strings.ToLower(t.Name)] = tenant.Stored{Tenant: after, Version: t.Version + 1}
	return nil
}

// Put creates or replaces tenants at once (see Store.Put).
func (m *Memory) Put(_ context.Context, actor string, tenants []tenant.Tenant) ([]Change, error) {
	var changes []Change
	err := m.tx(func(ts map[string]tenant.Stored, audit *[]sqldb.AuditEntry) error {
		for _, t := range tenants {
			c, err := m.put(ts, audit, actor, t)
			if err != nil {
				return err
			}
			if c != nil {
				changes = append(changes, *c)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store tenants: %w", err)
	}
	return changes, nil
}

// Commit writes an edit at once or not at all (see Store.Commit).
func (m *Memory) Commit(_ context.Context, actor string, e tenant.Edit) error {
	if e.Empty() {
		return nil
	}
	err := m.tx(func(ts map[string]tenant.Stored, audit *[]sqldb.AuditEntry) error {
		if err := CheckVersions(e, ts); err != nil {
			return err
		}
		for _, t := range e.Put {
			if _, err := m.put(ts, audit, actor, t.Tenant); err != nil {
				return err
			}
		}
		for _, t := range e.Delete {
			if err := m.markDeleting(ts, audit, actor, ts[strings.ToLower(t.Name)], t.State); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store tenants: %w", err)
	}
	return nil
}

// MarkDeleting sets tenants to deleting (see Store.MarkDeleting).
func (m *Memory) MarkDeleting(_ context.Context, actor string, names []string) ([]Change, error) {
	var changes []Change
	err := m.tx(func(ts map[string]tenant.Stored, audit *[]sqldb.AuditEntry) error {
		var missing []string
		for _, n := range names {
			if _, ok := ts[strings.ToLower(n)]; !ok {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("tenant(s) %s: %w", strings.Join(missing, ", "), ErrNotFound)
		}
		for _, n := range names {
			t := ts[strings.ToLower(n)]
			if t.IsDeleting() {
				continue
			}
			if err := m.markDeleting(ts, audit, actor, t, tenant.Deleting); err != nil {
				return err
			}
			b := t.Tenant
			changes = append(changes, Change{Name: t.Name, Action: ActionDelete, Before: &b, After: ts[strings.ToLower(n)].Tenant})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("delete tenants: %w", err)
	}
	return changes, nil
}

// Remove drops tenants being deleted (see Store.Remove), keeping their
// names as tombstones (RemovedNames).
func (m *Memory) Remove(_ context.Context, actor string, names []string) error {
	var gone []string
	err := m.tx(func(ts map[string]tenant.Stored, audit *[]sqldb.AuditEntry) error {
		for _, n := range names {
			t, ok := ts[strings.ToLower(n)]
			if !ok || !t.IsDeleting() {
				continue
			}
			delete(ts, strings.ToLower(n))
			if err := m.record(audit, actor, ActionRemove, t.Name, t.Tenant, nil); err != nil {
				return err
			}
			gone = append(gone, t.Name)
		}
		return nil
	})
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, n := range gone {
		m.removed[strings.ToLower(n)] = n
	}
	return nil
}

// RemovedNames returns the names of removed tenants, sorted
// case-insensitively as MariaDB's collation does (see Store.RemovedNames).
func (m *Memory) RemovedNames(context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.removed))
	for _, n := range m.removed {
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	return out, nil
}

// Audit returns audit rows, newest first (see Store.Audit).
func (m *Memory) Audit(_ context.Context, f AuditFilter) ([]sqldb.AuditEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f.Limit <= 0 {
		f.Limit = 100
	}
	var out []sqldb.AuditEntry
	for i := len(m.audit) - 1; i >= 0 && len(out) < f.Limit; i-- {
		e := m.audit[i]
		if f.Kind != "" && e.ObjectKind != f.Kind || f.Name != "" && e.ObjectName != f.Name {
			continue
		}
		out = append(out, e)
	}
	return out, nil
}
