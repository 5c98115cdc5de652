package tenantstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/internal/money"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// ErrNotFound: no tenant of that name (the same error as
// tenant.ErrNotFound).
var ErrNotFound = tenant.ErrNotFound

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
	CostCenter   string         `db:"cost_center"`
	CPUs         sql.NullInt64  `db:"cpus"`
	MemoryMB     sql.NullInt64  `db:"memory_mb"`
	BurstEnabled bool           `db:"burst_enabled"`
	BurstMaxGPUs int64          `db:"burst_max_gpus"`
	BurstBudget  sql.NullString `db:"burst_budget"` // DECIMAL(24,6): the budget exactly as written
	State        string         `db:"state"`
	Adopted      bool           `db:"adopted"`
	Version      int64          `db:"version"`
	CreatedAt    time.Time      `db:"created_at"`
	UpdatedAt    time.Time      `db:"updated_at"`
	// The booking policy's keys, NULL when the tenant does not set them.
	BookingMaxWindow  sql.NullInt64  `db:"booking_max_window_s"`
	BookingMinLead    sql.NullInt64  `db:"booking_min_lead_s"`
	BookingMaxHorizon sql.NullInt64  `db:"booking_max_horizon_s"`
	BookingSpendLimit sql.NullString `db:"booking_spend_limit"` // DECIMAL(24,6)
	// Origin is tenant.Origin as JSON, NULL for a tenant gpubridge created.
	Origin sql.NullString `db:"origin_json"`
}

type bookingGPURow struct {
	Tenant  string `db:"tenant"`
	Type    string `db:"gpu_type"`
	MaxGPUs int64  `db:"max_gpus"`
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

const tenantCols = `name, description, organization, cost_center, cpus, memory_mb, burst_enabled, burst_max_gpus, burst_budget, state, adopted, version, created_at, updated_at,
	booking_max_window_s, booking_min_lead_s, booking_max_horizon_s, booking_spend_limit, origin_json`

// queryer is *sqlx.DB or *sqlx.Tx.
type queryer interface {
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
}

// List returns every tenant, sorted by name (three queries).
func (s *Store) List(ctx context.Context) ([]tenant.Tenant, error) {
	ss, err := load(ctx, s.db, nil, false)
	return tenantsOf(ss), err
}

// ListStored is List with each tenant's version.
func (s *Store) ListStored(ctx context.Context) ([]tenant.Stored, error) {
	return load(ctx, s.db, nil, false)
}

// Get returns one tenant or ErrNotFound.
func (s *Store) Get(ctx context.Context, name string) (tenant.Tenant, error) {
	st, err := s.GetStored(ctx, name)
	return st.Tenant, err
}

// GetStored is Get with the tenant's version.
func (s *Store) GetStored(ctx context.Context, name string) (tenant.Stored, error) {
	ts, err := load(ctx, s.db, []string{name}, false)
	if err != nil {
		return tenant.Stored{}, err
	}
	if len(ts) == 0 {
		return tenant.Stored{}, fmt.Errorf("tenant %q: %w", name, ErrNotFound)
	}
	return ts[0], nil
}

func tenantsOf(ss []tenant.Stored) []tenant.Tenant {
	if ss == nil {
		return nil
	}
	out := make([]tenant.Tenant, len(ss))
	for i, s := range ss {
		out[i] = s.Tenant
	}
	return out
}

// Names returns every tenant name, sorted.
func (s *Store) Names(ctx context.Context) ([]string, error) {
	var names []string
	if err := s.db.SelectContext(ctx, &names, `SELECT name FROM tenants ORDER BY name`); err != nil {
		return nil, fmt.Errorf("list tenant names: %w", err)
	}
	return names, nil
}

// RemovedNames returns the names of tenants whose deletion finished
// (Remove), sorted case-insensitively: the ledger still labels their
// accounts' usage.
func (s *Store) RemovedNames(ctx context.Context) ([]string, error) {
	var names []string
	if err := s.db.SelectContext(ctx, &names, `SELECT name FROM tenants_removed ORDER BY name`); err != nil {
		return nil, fmt.Errorf("list removed tenant names: %w", err)
	}
	return names, nil
}

// load reads tenants (all when names is nil); forUpdate locks their rows.
func load(ctx context.Context, q queryer, names []string, forUpdate bool) ([]tenant.Stored, error) {
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
	var rs storedRows
	if err := rs.read(ctx, q, where, args, lock); err != nil {
		return nil, err
	}
	byName := map[string]*tenant.Stored{}
	out := make([]tenant.Stored, len(rs.tenants))
	for i, r := range rs.tenants {
		t, err := fromRow(r)
		if err != nil {
			return nil, err
		}
		out[i] = tenant.Stored{Tenant: t, Version: r.Version}
		byName[strings.ToLower(r.Name)] = &out[i]
	}
	rs.attach(byName)
	for i := range out {
		out[i].Normalize()
	}
	return out, nil
}

// storedRows are the rows of some tenants: their own, their users, their
// GPU quotas and their booking limits per GPU type.
type storedRows struct {
	tenants []tenantRow
	users   []userRow
	gpus    []gpuRow
	bgpus   []bookingGPURow
}

// read selects the rows of the tenants where selects (by name, with
// args), each table in name order, locked when lock says so.
func (rs *storedRows) read(ctx context.Context, q queryer, where string, args []any, lock string) error {
	if err := q.SelectContext(ctx, &rs.tenants, `SELECT `+tenantCols+` FROM tenants`+where+` ORDER BY name`+lock, args...); err != nil {
		return fmt.Errorf("read tenants: %w", err)
	}
	twhere := strings.Replace(where, "name IN", "tenant IN", 1)
	if err := q.SelectContext(ctx, &rs.users, `SELECT tenant, user_name, is_admin FROM tenant_users`+twhere+` ORDER BY tenant, user_name`+lock, args...); err != nil {
		return fmt.Errorf("read tenant users: %w", err)
	}
	if err := q.SelectContext(ctx, &rs.gpus, `SELECT tenant, gpu_type, quota FROM tenant_gpus`+twhere+` ORDER BY tenant, gpu_type`+lock, args...); err != nil {
		return fmt.Errorf("read tenant quotas: %w", err)
	}
	if err := q.SelectContext(ctx, &rs.bgpus, `SELECT tenant, gpu_type, max_gpus FROM tenant_booking_gpus`+twhere+` ORDER BY tenant, gpu_type`+lock, args...); err != nil {
		return fmt.Errorf("read tenant booking limits: %w", err)
	}
	return nil
}

// fromRow is the tenant a tenants row holds (without its users and GPU
// types, which have rows of their own).
func fromRow(r tenantRow) (tenant.Tenant, error) {
	t := tenant.Tenant{
		Name: r.Name, Description: r.Description, Organization: r.Organization, CostCenter: r.CostCenter,
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
			return t, fmt.Errorf("tenant %q: stored budget: %w", r.Name, err)
		}
		t.Burst.MonthlyBudget = &v
	}
	if err := readBookingPolicy(r, &t.Bookings); err != nil {
		return t, err
	}
	if r.Origin.Valid {
		var o tenant.Origin
		if err := json.Unmarshal([]byte(r.Origin.String), &o); err != nil {
			return t, fmt.Errorf("tenant %q: stored origin: %w", r.Name, err)
		}
		t.Origin = &o
	}
	return t, nil
}

// attach adds the users, GPU quotas and booking limits to their tenants
// (by lower-case name); rows of a tenant not read are skipped.
func (rs *storedRows) attach(byName map[string]*tenant.Stored) {
	for _, u := range rs.users {
		t := byName[strings.ToLower(u.Tenant)]
		if t == nil {
			continue
		}
		t.Users = append(t.Users, u.User)
		if u.IsAdmin {
			t.Admins = append(t.Admins, u.User)
		}
	}
	for _, g := range rs.gpus {
		t := byName[strings.ToLower(g.Tenant)]
		if t == nil {
			continue
		}
		if t.GPUs == nil {
			t.GPUs = tenant.Quota{}
		}
		t.GPUs[g.Type] = g.Quota
	}
	for _, g := range rs.bgpus {
		t := byName[strings.ToLower(g.Tenant)]
		if t == nil {
			continue
		}
		if t.Bookings.MaxGPUs == nil {
			t.Bookings.MaxGPUs = map[string]int{}
		}
		t.Bookings.MaxGPUs[g.Type] = int(g.MaxGPUs)
	}
}

// readBookingPolicy fills a tenant's booking policy from its row.
func readBookingPolicy(r tenantRow, p *tenant.BookingPolicy) error {
	for _, f := range []struct {
		col sql.NullInt64
		dst **reserve.Span
	}{{r.BookingMaxWindow, &p.MaxWindow}, {r.BookingMinLead, &p.MinLead}, {r.BookingMaxHorizon, &p.MaxHorizon}} {
		if f.col.Valid {
			v := reserve.Span(time.Duration(f.col.Int64) * time.Second)
			*f.dst = &v
		}
	}
	if r.BookingSpendLimit.Valid {
		v, err := money.Parse(r.BookingSpendLimit.String)
		if err != nil {
			return fmt.Errorf("tenant %q: stored booking spend limit: %w", r.Name, err)
		}
		p.MonthlySpendLimit = &v
	}
	return nil
}

// spanSeconds is a policy duration as stored: whole seconds, NULL when unset.
func spanSeconds(v *reserve.Span) sql.NullInt64 {
	if v == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: int64(time.Duration(*v) / time.Second), Valid: true}
}

// byFold indexes stored tenants by lower-cased name.
func byFold(ss []tenant.Stored) map[string]tenant.Stored {
	m := make(map[string]tenant.Stored, len(ss))
	for _, t := range ss {
		m[strings.ToLower(t.Name)] = t
	}
	return m
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
		before := byFold(old)
		now := s.now().UTC()
		for _, t := range ts {
			c, err := put(ctx, tx, actor, now, t, before)
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

// put writes t (create or replace) with its audit row inside tx; nil when
// t equals the stored tenant. before holds the stored tenants by folded
// name, and is updated.
func put(ctx context.Context, tx *sqlx.Tx, actor string, now time.Time, t tenant.Tenant, before map[string]tenant.Stored) (*Change, error) {
	t = t.Clone()
	t.Normalize()
	prev, exists := before[strings.ToLower(t.Name)]
	if exists && prev.Name != t.Name {
		return nil, fmt.Errorf("tenant %q: collides with the existing tenant %q (Slurm lower-cases account names)", t.Name, prev.Name)
	}
	if exists && reflect.DeepEqual(prev.Tenant, t) {
		return nil, nil
	}
	version := int64(1)
	if exists {
		version = prev.Version + 1
	}
	if err := write(ctx, tx, t, exists, version, now); err != nil {
		return nil, err
	}
	c := Change{Name: t.Name, Action: ActionCreate, After: t}
	var b any
	if exists {
		p := prev.Tenant
		c.Action, c.Before, b = ActionModify, &p, p
	}
	if err := sqldb.Audit(ctx, tx, now, actor, c.Action, AuditKind, t.Name, b, t); err != nil {
		return nil, err
	}
	before[strings.ToLower(t.Name)] = tenant.Stored{Tenant: t, Version: version}
	return &c, nil
}

// Commit writes an edit in one transaction, or nothing: each tenant of
// e.Put is created (Version 0: it must not exist) or replaced (Version n:
// the stored record must still be at version n), each of e.Delete is
// marked deleting (at its version, unless 0), with an audit row per
// change. A version that does not match refuses the whole edit with
// tenant.ErrChanged; an unknown tenant to delete with ErrNotFound.
func (s *Store) Commit(ctx context.Context, actor string, e tenant.Edit) error {
	if e.Empty() {
		return nil
	}
	err := sqldb.WithTx(ctx, s.db, func(tx *sqlx.Tx) error {
		var names []string
		for _, t := range append(slices.Clone(e.Put), e.Delete...) {
			names = append(names, t.Name)
		}
		old, err := load(ctx, tx, names, true)
		if err != nil {
			return err
		}
		before := byFold(old)
		if err := CheckVersions(e, before); err != nil {
			return err
		}
		now := s.now().UTC()
		for _, t := range e.Put {
			if _, err := put(ctx, tx, actor, now, t.Tenant, before); err != nil {
				return err
			}
		}
		for _, t := range e.Delete {
			if err := markDeleting(ctx, tx, actor, now, before[strings.ToLower(t.Name)], t.State); err != nil {
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

// CheckVersions checks an edit's versions against the stored tenants (by
// folded name): the rule Commit applies, shared by the in-memory store.
func CheckVersions(e tenant.Edit, stored map[string]tenant.Stored) error {
	for _, t := range e.Put {
		prev, exists := stored[strings.ToLower(t.Name)]
		switch {
		case t.Version == 0 && exists && prev.Name == t.Name:
			return fmt.Errorf("tenant %q was created by someone else since you read the store: %w", t.Name, tenant.ErrChanged)
		case t.Version != 0 && !exists:
			return fmt.Errorf("tenant %q was removed since you read it: %w", t.Name, tenant.ErrChanged)
		case t.Version != 0 && prev.Version != t.Version:
			return fmt.Errorf("tenant %q %w (version %d, now %d); nothing was changed: run the command again", t.Name, tenant.ErrChanged, t.Version, prev.Version)
		}
	}
	for _, t := range e.Delete {
		prev, exists := stored[strings.ToLower(t.Name)]
		switch {
		case !exists:
			return fmt.Errorf("tenant(s) %s: %w", t.Name, ErrNotFound)
		case t.Version != 0 && prev.Version != t.Version:
			return fmt.Errorf("tenant %q %w (version %d, now %d); nothing was changed: run the command again", t.Name, tenant.ErrChanged, t.Version, prev.Version)
		}
	}
	return nil
}

// write inserts t (or updates it when exists) with its users, GPU quotas
// and booking limits; an insert that finds the name taken is
// tenant.ErrChanged.
func write(ctx context.Context, tx *sqlx.Tx, t tenant.Tenant, exists bool, version int64, now time.Time) error {
	r, err := toRow(t, version, now)
	if err != nil {
		return err
	}
	q := `INSERT INTO tenants (` + tenantCols + `) VALUES (:name, :description, :organization, :cost_center, :cpus, :memory_mb,
		:burst_enabled, :burst_max_gpus, :burst_budget, :state, :adopted, :version, :created_at, :updated_at,
		:booking_max_window_s, :booking_min_lead_s, :booking_max_horizon_s, :booking_spend_limit, :origin_json)`
	if exists {
		q = `UPDATE tenants SET description = :description, organization = :organization, cost_center = :cost_center, cpus = :cpus, memory_mb = :memory_mb,
			burst_enabled = :burst_enabled, burst_max_gpus = :burst_max_gpus, burst_budget = :burst_budget,
			state = :state, adopted = :adopted, version = :version, updated_at = :updated_at,
			booking_max_window_s = :booking_max_window_s, booking_min_lead_s = :booking_min_lead_s,
			booking_max_horizon_s = :booking_max_horizon_s, booking_spend_limit = :booking_spend_limit,
			origin_json = :origin_json WHERE name = :name`
	}
	if _, err := tx.NamedExecContext(ctx, q, r); err != nil {
		if me, ok := errors.AsType[*mysql.MySQLError](err); ok && me.Number == 1062 { // duplicate key: inserted meanwhile
			return fmt.Errorf("tenant %q was created by someone else since you read the store: %w", t.Name, tenant.ErrChanged)
		}
		return fmt.Errorf("write tenant %q: %w", t.Name, err)
	}
	return writeChildren(ctx, tx, t)
}

// toRow is the tenants row of t (its users and GPU types have rows of
// their own).
func toRow(t tenant.Tenant, version int64, now time.Time) (tenantRow, error) {
	r := tenantRow{
		Name: t.Name, Description: t.Description, Organization: t.Organization, CostCenter: t.CostCenter,
		BurstEnabled: t.Burst.Enabled, BurstMaxGPUs: t.Burst.MaxOnDemandGPUs,
		State: string(t.State), Adopted: t.Adopted, Version: version, CreatedAt: now, UpdatedAt: now,
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
	if t.Origin != nil {
		b, err := json.Marshal(t.Origin)
		if err != nil {
			return r, fmt.Errorf("write tenant %q: origin: %w", t.Name, err)
		}
		r.Origin = sql.NullString{String: string(b), Valid: true}
	}
	bp := t.Bookings
	r.BookingMaxWindow, r.BookingMinLead, r.BookingMaxHorizon = spanSeconds(bp.MaxWindow), spanSeconds(bp.MinLead), spanSeconds(bp.MaxHorizon)
	if bp.MonthlySpendLimit != nil {
		r.BookingSpendLimit = sql.NullString{String: bp.MonthlySpendLimit.String(), Valid: true}
	}
	return r, nil
}

// writeChildren replaces the rows of t's users, GPU quotas and booking
// limits per GPU type.
func writeChildren(ctx context.Context, tx *sqlx.Tx, t tenant.Tenant) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM tenant_users WHERE tenant = ?`, t.Name); err != nil {
		return fmt.Errorf("write users of %q: %w", t.Name, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM tenant_gpus WHERE tenant = ?`, t.Name); err != nil {
		return fmt.Errorf("write quota of %q: %w", t.Name, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM tenant_booking_gpus WHERE tenant = ?`, t.Name); err != nil {
		return fmt.Errorf("write booking limits of %q: %w", t.Name, err)
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
	if bp := t.Bookings; len(bp.MaxGPUs) > 0 {
		rows := make([]bookingGPURow, 0, len(bp.MaxGPUs))
		for _, typ := range slices.Sorted(maps.Keys(bp.MaxGPUs)) {
			rows = append(rows, bookingGPURow{Tenant: t.Name, Type: typ, MaxGPUs: int64(bp.MaxGPUs[typ])})
		}
		if _, err := tx.NamedExecContext(ctx, `INSERT INTO tenant_booking_gpus (tenant, gpu_type, max_gpus) VALUES (:tenant, :gpu_type, :max_gpus)`, rows); err != nil {
			return fmt.Errorf("write booking limits of %q: %w", t.Name, err)
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
			if err := markDeleting(ctx, tx, actor, now, t, tenant.Deleting); err != nil {
				return err
			}
			b := t.Tenant
			after := t.Clone()
			after.State = tenant.Deleting
			changes = append(changes, Change{Name: t.Name, Action: ActionDelete, Before: &b, After: after})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("delete tenants: %w", err)
	}
	return changes, nil
}

// markDeleting sets t to state (tenant.Deleting, or tenant.Releasing:
// see tenant.Edit.Delete; "" is Deleting) as a new version with its audit
// row; a tenant already in that state is left alone.
func markDeleting(ctx context.Context, tx *sqlx.Tx, actor string, now time.Time, t tenant.Stored, state tenant.State) error {
	state = DeletionState(t.Tenant, state)
	if t.State == state {
		return nil
	}
	after := t.Clone()
	after.State = state
	if _, err := tx.ExecContext(ctx, `UPDATE tenants SET state = ?, version = ?, updated_at = ? WHERE name = ?`, string(state), t.Version+1, now, t.Name); err != nil {
		return fmt.Errorf("mark %q %s: %w", t.Name, state, err)
	}
	return sqldb.Audit(ctx, tx, now, actor, ActionDelete, AuditKind, t.Name, t.Tenant, after)
}

// DeletionState is the state an edit's deletion of stored tenant t asks
// for: Releasing only for a tenant that can be released (adopted, its
// origin recorded), Deleting otherwise ("" included). The rule Commit
// applies, shared by the in-memory store.
func DeletionState(t tenant.Tenant, asked tenant.State) tenant.State {
	if asked == tenant.Releasing && t.Adopted && t.Origin != nil {
		return tenant.Releasing
	}
	return tenant.Deleting
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
		var gone []sqldb.Audited
		var goneNames []string
		for _, t := range old {
			if t.IsDeleting() {
				gone = append(gone, sqldb.Audited{Name: t.Name, Before: t.Tenant})
				goneNames = append(goneNames, t.Name)
			}
		}
		// In statements of up to 500 tenants: a thousand tenants removed
		// at once are a few round trips, not three thousand.
		for chunk := range slices.Chunk(goneNames, 500) {
			q, args, err := sqlx.In(`DELETE FROM tenants WHERE name IN (?)`, chunk)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return fmt.Errorf("remove %d tenant(s) (%s ...): %w", len(chunk), chunk[0], err)
			}
			// The tenant's API tokens go with it: a tenant created later
			// under the same name never gets them (cmd/gpubridge/api/tokenstore).
			if err := removeTokens(ctx, tx, chunk, now, actor); err != nil {
				return err
			}
			vals := strings.TrimSuffix(strings.Repeat("(?, ?),", len(chunk)), ",")
			args = args[:0]
			for _, n := range chunk {
				args = append(args, n, now)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO tenants_removed (name, removed_at) VALUES `+vals+`
				ON DUPLICATE KEY UPDATE removed_at = VALUES(removed_at)`, args...); err != nil {
				return fmt.Errorf("remove %d tenant(s) (%s ...): tombstones: %w", len(chunk), chunk[0], err)
			}
		}
		return sqldb.AuditAll(ctx, tx, now, actor, ActionRemove, AuditKind, gone)
	})
	if err != nil {
		return fmt.Errorf("remove tenants: %w", err)
	}
	return nil
}

// removeTokens deletes the API tokens of tenants (table api_tokens of
// cmd/gpubridge/api/tokenstore), each audited as that store audits a delete.
func removeTokens(ctx context.Context, tx *sqlx.Tx, tenants []string, now time.Time, actor string) error {
	q, args, err := sqlx.In(`SELECT tenant, name FROM api_tokens WHERE tenant IN (?) ORDER BY tenant, name FOR UPDATE`, tenants)
	if err != nil {
		return err
	}
	var toks []struct {
		Tenant string `db:"tenant"`
		Name   string `db:"name"`
	}
	if err := tx.SelectContext(ctx, &toks, q, args...); err != nil {
		return fmt.Errorf("read the API tokens of removed tenants: %w", err)
	}
	if len(toks) == 0 {
		return nil
	}
	q, args, err = sqlx.In(`DELETE FROM api_tokens WHERE tenant IN (?)`, tenants)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("delete the API tokens of removed tenants: %w", err)
	}
	gone := make([]sqldb.Audited, len(toks))
	for i, t := range toks {
		gone[i] = sqldb.Audited{Name: t.Tenant + "/" + t.Name, Before: map[string]string{"tenant": t.Tenant, "name": t.Name, "reason": "tenant removed"}}
	}
	return sqldb.AuditAll(ctx, tx, now, actor, "delete", "api-token", gone)
}

func missingNames(names []string, have []tenant.Stored) []string {
	var out []string
	for _, n := range names {
		if !slices.ContainsFunc(have, func(t tenant.Stored) bool { return strings.EqualFold(t.Name, n) }) {
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
