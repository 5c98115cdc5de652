package tenantstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/internal/money"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// ErrNotFound: no tenant of that name.
var ErrNotFound = errors.New("no such tenant")

// AuditKind is the audit log's object_kind for tenants.
const AuditKind = "tenant"

// Audit actions.
const (
	ActionCreate = "create"
	ActionModify = "modify"
	ActionDelete = "delete" // marked deleting: Slurm objects go once jobs end
	ActionRemove = "remove" // gone from Slurm and from the store
)

// Store is the MariaDB tenant store.
type Store struct {
	db  *sqlx.DB
	now func() time.Time
}

// New returns a store on a migrated database.
func New(db *sqlx.DB) *Store { return &Store{db: db, now: time.Now} }

// WithClock sets the clock (tests).
func (s *Store) WithClock(now func() time.Time) *Store { s.now = now; return s }

type tenantRow struct {
	Name         string         `db:"name"`
	Description  string         `db:"description"`
	Organization string         `db:"organization"`
	CPUs         sql.NullInt64  `db:"cpus"`
	MemoryMB     sql.NullInt64  `db:"memory_mb"`
	BurstEnabled bool           `db:"burst_enabled"`
	BurstMaxGPUs int64          `db:"burst_max_gpus"`
	BurstBudget  sql.NullString `db:"burst_budget"` // DECIMAL(24,6): the budget exactly as written
	State        string         `db:"state"`
	Adopted      bool           `db:"adopted"`
	CreatedAt    time.Time      `db:"created_at"`
	UpdatedAt    time.Time      `db:"updated_at"`
}

type userRow struct {
	Tenant  string `db:"tenant"`
	User    string `db:"user_name"`
	IsAdmin bool   `db:"is_admin"`
}

type gpuRow struct {
	Tenant string `db:"tenant"`
	Type   string `db:"gpu_type"`
	Quota  int64  `db:"quota"`
}

const tenantCols = `name, description, organization, cpus, memory_mb, burst_enabled, burst_max_gpus, burst_budget, state, adopted, created_at, updated_at`

// queryer is *sqlx.DB or *sqlx.Tx.
type queryer interface {
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
}

// List returns every tenant, sorted by name (three queries).
func (s *Store) List(ctx context.Context) ([]tenant.Tenant, error) {
	return load(ctx, s.db, nil, false)
}

// Get returns one tenant or ErrNotFound.
func (s *Store) Get(ctx context.Context, name string) (tenant.Tenant, error) {
	ts, err := load(ctx, s.db, []string{name}, false)
	if err != nil {
		return tenant.Tenant{}, err
	}
	if len(ts) == 0 {
		return tenant.Tenant{}, fmt.Errorf("tenant %q: %w", name, ErrNotFound)
	}
	return ts[0], nil
}

// Names returns every tenant name, sorted.
func (s *Store) Names(ctx context.Context) ([]string, error) {
	var names []string
	if err := s.db.SelectContext(ctx, &names, `SELECT name FROM tenants ORDER BY name`); err != nil {
		return nil, fmt.Errorf("list tenant names: %w", err)
	}
	return names, nil
}

// load reads tenants (all when names is nil); forUpdate locks their rows.
func load(ctx context.Context, q queryer, names []string, forUpdate bool) ([]tenant.Tenant, error) {
	where, args := "", []any{}
	if names != nil {
		if len(names) == 0 {
			return nil, nil
		}
		var err error
		where, args, err = sqlx.In(` WHERE name IN (?)`, names)
		if err != nil {
			return nil, err
		}
	}
	lock := ""
	if forUpdate {
		lock = " FOR UPDATE"
	}
	var rows []tenantRow
	if err := q.SelectContext(ctx, &rows, `SELECT `+tenantCols+` FROM tenants`+where+` ORDER BY name`+lock, args...); err != nil {
		return nil, fmt.Errorf("read tenants: %w", err)
	}
	twhere := strings.Replace(where, "name IN", "tenant IN", 1)
	var users []userRow
	if err := q.SelectContext(ctx, &users, `SELECT tenant, user_name, is_admin FROM tenant_users`+twhere+` ORDER BY tenant, user_name`+lock, args...); err != nil {
		return nil, fmt.Errorf("read tenant users: %w", err)
	}
	var gpus []gpuRow
	if err := q.SelectContext(ctx, &gpus, `SELECT tenant, gpu_type, quota FROM tenant_gpus`+twhere+` ORDER BY tenant, gpu_type`+lock, args...); err != nil {
		return nil, fmt.Errorf("read tenant quotas: %w", err)
	}
	byName := map[string]*tenant.Tenant{}
	out := make([]tenant.Tenant, len(rows))
	for i, r := range rows {
		t := tenant.Tenant{
			Name: r.Name, Description: r.Description, Organization: r.Organization,
			State: tenant.State(r.State), Adopted: r.Adopted,
			Burst: tenant.Burst{Enabled: r.BurstEnabled, MaxOnDemandGPUs: r.BurstMaxGPUs},
		}
		if r.CPUs.Valid {
			v := r.CPUs.Int64
			t.CPUs = &v
		}
		if r.MemoryMB.Valid {
			v := tenant.Megabyte(r.MemoryMB.Int64)
			t.Memory = &v
		}
		if r.BurstBudget.Valid {
			v, err := money.Parse(r.BurstBudget.String)
			if err != nil {
				return nil, fmt.Errorf("tenant %q: stored budget: %w", r.Name, err)
			}
			t.Burst.MonthlyBudget = &v
		}
		out[i] = t
		byName[strings.ToLower(r.Name)] = &out[i]
	}
	for _, u := range users {
		t := byName[strings.ToLower(u.Tenant)]
		if t == nil {
			continue
		}
		t.Users = append(t.Users, u.User)
		if u.IsAdmin {
			t.Admins = append(t.Admins, u.User)
		}
	}
	for _, g := range gpus {
		t := byName[strings.ToLower(g.Tenant)]
		if t == nil {
			continue
		}
		if t.GPUs == nil {
			t.GPUs = tenant.Quota{}
		}
		t.GPUs[g.Type] = g.Quota
	}
	for i := range out {
		out[i].Normalize()
	}
	return out, nil
}

// Change is what Put did to one tenant.
type Change struct {
	Name   string
	Action string // create or modify
	Before *tenant.Tenant
	After  tenant.Tenant
}

// Put creates or replaces tenants in one transaction, writing an audit row
// for each tenant that changes; unchanged tenants are left alone. Callers
// validate first (tenant.ValidateSet); the database refuses names that
// differ only in case.
func (s *Store) Put(ctx context.Context, actor string, ts []tenant.Tenant) ([]Change, error) {
	var changes []Change
	err := sqldb.WithTx(ctx, s.db, func(tx *sqlx.Tx) error {
		changes = nil
		names := make([]string, len(ts))
		for i, t := range ts {
			names[i] = t.Name
		}
		old, err := load(ctx, tx, names, true)
		if err != nil {
			return err
		}
		before := map[string]tenant.Tenant{}
		for _, t := range old {
			before[strings.ToLower(t.Name)] = t
		}
		now := s.now().UTC()
		for _, t := range ts {
			t = t.Clone()
			t.Normalize()
			prev, exists := before[strings.ToLower(t.Name)]
			if exists && prev.Name != t.Name {
				return fmt.Errorf("tenant %q: collides with the existing tenant %q (Slurm lower-cases account names)", t.Name, prev.Name)
			}
			if exists && reflect.DeepEqual(prev, t) {
				continue
			}
			if err := write(ctx, tx, t, exists, now); err != nil {
				return err
			}
			c := Change{Name: t.Name, Action: ActionCreate, After: t}
			var b any
			if exists {
				p := prev
				c.Action, c.Before, b = ActionModify, &p, p
			}
			if err := sqldb.Audit(ctx, tx, now, actor, c.Action, AuditKind, t.Name, b, t); err != nil {
				return err
			}
			changes = append(changes, c)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store tenants: %w", err)
	}
	return changes, nil
}

func write(ctx context.Context, tx *sqlx.Tx, t tenant.Tenant, exists bool, now time.Time) error {
	r := tenantRow{
		Name: t.Name, Description: t.Description, Organization: t.Organization,
		BurstEnabled: t.Burst.Enabled, BurstMaxGPUs: t.Burst.MaxOnDemandGPUs,
		State: string(t.State), Adopted: t.Adopted, CreatedAt: now, UpdatedAt: now,
	}
	if t.CPUs != nil {
		r.CPUs = sql.NullInt64{Int64: *t.CPUs, Valid: true}
	}
	if t.Memory != nil {
		r.MemoryMB = sql.NullInt64{Int64: int64(*t.Memory), Valid: true}
	}
	if t.Burst.MonthlyBudget != nil {
		r.BurstBudget = sql.NullString{String: t.Burst.MonthlyBudget.String(), Valid: true}
	}
	q := `INSERT INTO tenants (` + tenantCols + `) VALUES (:name, :description, :organization, :cpus, :memory_mb,
		:burst_enabled, :burst_max_gpus, :burst_budget, :state, :adopted, :created_at, :updated_at)`
	if exists {
		q = `UPDATE tenants SET description = :description, organization = :organization, cpus = :cpus, memory_mb = :memory_mb,
			burst_enabled = :burst_enabled, burst_max_gpus = :burst_max_gpus, burst_budget = :burst_budget,
			state = :state, adopted = :adopted, updated_at = :updated_at WHERE name = :name`
	}
	if _, err := tx.NamedExecContext(ctx, q, r); err != nil {
		return fmt.Errorf("write tenant %q: %w", t.Name, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM tenant_users WHERE tenant = ?`, t.Name); err != nil {
		return fmt.Errorf("write users of %q: %w", t.Name, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM tenant_gpus WHERE tenant = ?`, t.Name); err != nil {
		return fmt.Errorf("write quota of %q: %w", t.Name, err)
	}
	if len(t.Users) > 0 {
		rows := make([]userRow, len(t.Users))
		for i, u := range t.Users {
			rows[i] = userRow{Tenant: t.Name, User: u, IsAdmin: slices.Contains(t.Admins, u)}
		}
		if _, err := tx.NamedExecContext(ctx, `INSERT INTO tenant_users (tenant, user_name, is_admin) VALUES (:tenant, :user_name, :is_admin)`, rows); err != nil {
			return fmt.Errorf("write users of %q: %w", t.Name, err)
		}
	}
	if len(t.GPUs) > 0 {
		rows := make([]gpuRow, 0, len(t.GPUs))
		for _, typ := range t.GPUs.Types() {
			rows = append(rows, gpuRow{Tenant: t.Name, Type: typ, Quota: t.GPUs[typ]})
		}
		if _, err := tx.NamedExecContext(ctx, `INSERT INTO tenant_gpus (tenant, gpu_type, quota) VALUES (:tenant, :gpu_type, :quota)`, rows); err != nil {
			return fmt.Errorf("write quota of %q: %w", t.Name, err)
		}
	}
	return nil
}

// MarkDeleting sets tenants to deleting (audit action delete): the next
// apply blocks their new submissions and removes their Slurm objects once
// their jobs have ended. Unknown names are ErrNotFound and change nothing.
func (s *Store) MarkDeleting(ctx context.Context, actor string, names []string) ([]Change, error) {
	var changes []Change
	err := sqldb.WithTx(ctx, s.db, func(tx *sqlx.Tx) error {
		changes = nil
		old, err := load(ctx, tx, names, true)
		if err != nil {
			return err
		}
		if missing := missingNames(names, old); len(missing) > 0 {
			return fmt.Errorf("tenant(s) %s: %w", strings.Join(missing, ", "), ErrNotFound)
		}
		now := s.now().UTC()
		for _, t := range old {
			if t.IsDeleting() {
				continue
			}
			after := t.Clone()
			after.State = tenant.Deleting
			if _, err := tx.ExecContext(ctx, `UPDATE tenants SET state = ?, updated_at = ? WHERE name = ?`, string(tenant.Deleting), now, t.Name); err != nil {
				return fmt.Errorf("mark %q deleting: %w", t.Name, err)
			}
			if err := sqldb.Audit(ctx, tx, now, actor, ActionDelete, AuditKind, t.Name, t, after); err != nil {
				return err
			}
			b := t
			changes = append(changes, Change{Name: t.Name, Action: ActionDelete, Before: &b, After: after})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("delete tenants: %w", err)
	}
	return changes, nil
}

// Remove drops tenants that are being deleted and whose Slurm objects are
// gone (audit action remove, after = nil). A tenant not in the deleting
// state is left alone (it was re-declared meanwhile).
func (s *Store) Remove(ctx context.Context, actor string, names []string) error {
	err := sqldb.WithTx(ctx, s.db, func(tx *sqlx.Tx) error {
		old, err := load(ctx, tx, names, true)
		if err != nil {
			return err
		}
		now := s.now().UTC()
		for _, t := range old {
			if !t.IsDeleting() {
				continue
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM tenants WHERE name = ?`, t.Name); err != nil {
				return fmt.Errorf("remove %q: %w", t.Name, err)
			}
			if err := sqldb.Audit(ctx, tx, now, actor, ActionRemove, AuditKind, t.Name, t, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("remove tenants: %w", err)
	}
	return nil
}

func missingNames(names []string, have []tenant.Tenant) []string {
	var out []string
	for _, n := range names {
		if !slices.ContainsFunc(have, func(t tenant.Tenant) bool { return strings.EqualFold(t.Name, n) }) {
			out = append(out, n)
		}
	}
	return out
}

// AuditFilter selects audit rows; zero fields match everything.
type AuditFilter struct {
	Kind  string // e.g. tenant
	Name  string
	Limit int // newest first; default 100
}

// Audit returns audit log rows, newest first.
func (s *Store) Audit(ctx context.Context, f AuditFilter) ([]sqldb.AuditEntry, error) {
	q := `SELECT id, at, actor, action, object_kind, object_name, before_json, after_json FROM audit_log WHERE 1=1`
	var args []any
	if f.Kind != "" {
		q += ` AND object_kind = ?`
		args = append(args, f.Kind)
	}
	if f.Name != "" {
		q += ` AND object_name = ?`
		args = append(args, f.Name)
	}
	if f.Limit <= 0 {
		f.Limit = 100
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, f.Limit)
	var out []sqldb.AuditEntry
	if err := s.db.SelectContext(ctx, &out, q, args...); err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	return out, nil
}
