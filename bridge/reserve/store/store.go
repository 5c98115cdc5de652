package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// Audit log object kinds.
const (
	AuditBooking     = "booking"
	AuditMaintenance = "maintenance"
)

// DB is the MariaDB store of one cluster's bookings.
type DB struct {
	db      *sqlx.DB
	cluster string
	now     func() time.Time
	known   sync.Map // lock rows known to exist
}

var _ reserve.Store = (*DB)(nil)

// New returns the store of cluster on a migrated database (sqldb.Migrate).
func New(db *sqlx.DB, cluster string) *DB { return &DB{db: db, cluster: cluster, now: time.Now} }

// WithClock sets the clock of audit rows (tests).
func (s *DB) WithClock(now func() time.Time) *DB { s.now = now; return s }

// Atomic runs fn holding the lock rows of the resources. The lock rows are
// created beforehand, outside the transaction (two transactions inserting
// the same new key can deadlock each other). Taking the lock is the
// transaction's first statement, and it WRITES the rows (version + 1), not
// only locks them: on one server the write locks them like SELECT ... FOR
// UPDATE; on Galera, where a row lock does not conflict across nodes, two
// admissions through two nodes write the same row and certification aborts
// one of them at commit (1213). sqldb.WithTx runs an aborted transaction
// again, from the start: it then sees the winner's booking. Under
// REPEATABLE READ the snapshot is taken at the first plain read, after the
// lock is granted, so fn sees every booking committed by the lock's
// previous holder.
func (s *DB) Atomic(ctx context.Context, locks []reserve.Resource, fn func(reserve.Tx) error) error {
	if err := s.ensureLocks(ctx, locks); err != nil {
		return err
	}
	return sqldb.WithTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if len(locks) > 0 {
			names := resourceStrings(locks)
			slices.Sort(names)
			q, args, err := sqlx.In(`UPDATE booking_locks SET version = version + 1 WHERE cluster = ? AND resource IN (?) ORDER BY resource`, s.cluster, names)
			if err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, q, args...)
			if err != nil {
				return fmt.Errorf("lock %s: %w", strings.Join(names, ","), err)
			}
			if n, err := res.RowsAffected(); err != nil || n != int64(len(names)) {
				return fmt.Errorf("lock %s: %d of %d lock rows found (%v)", strings.Join(names, ","), n, len(names), err)
			}
		}
		return fn(&dbTx{s: s, tx: tx})
	})
}

func uniq(rs []reserve.Resource) map[reserve.Resource]bool {
	m := map[reserve.Resource]bool{}
	for _, r := range rs {
		m[r] = true
	}
	return m
}

func resourceStrings(rs []reserve.Resource) []string {
	out := make([]string, 0, len(rs))
	for r := range uniq(rs) {
		out = append(out, string(r))
	}
	return out
}

// ensureLocks creates the lock rows not known to exist: one row per
// transaction, in sorted order, each retried by sqldb.WithTx when MariaDB
// picks it as a deadlock victim or Galera's certification refuses it (many
// processes creating the same new rows at once, as a tenant's first
// bookings do).
func (s *DB) ensureLocks(ctx context.Context, locks []reserve.Resource) error {
	missing := resourceStrings(locks)
	slices.Sort(missing)
	for _, r := range missing {
		if _, ok := s.known.Load(r); ok {
			continue
		}
		if err := sqldb.WithTx(ctx, s.db, func(tx *sqlx.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT IGNORE INTO booking_locks (cluster, resource) VALUES (?, ?)`, s.cluster, r)
			return err
		}); err != nil {
			return fmt.Errorf("create booking lock row %s: %w", r, err)
		}
		s.known.Store(r, true)
	}
	return nil
}

type bookingRow struct {
	ID          int64          `db:"id"`
	Cluster     string         `db:"cluster"`
	Tenant      string         `db:"tenant"`
	Kind        string         `db:"kind"`
	Resource    string         `db:"resource"`
	Count       int            `db:"count"`
	StartAt     time.Time      `db:"start_at"`
	EndAt       time.Time      `db:"end_at"`
	Purpose     string         `db:"purpose"`
	State       string         `db:"state"`
	CreatedBy   string         `db:"created_by"`
	CreatedAt   time.Time      `db:"created_at"`
	UpdatedAt   time.Time      `db:"updated_at"`
	CancelledAt sql.NullTime   `db:"cancelled_at"`
	CancelledBy string         `db:"cancelled_by"`
	HeldName    string         `db:"held_name"`
	HeldStart   sql.NullTime   `db:"held_start"`
	HeldEnd     sql.NullTime   `db:"held_end"`
	HeldCount   int            `db:"held_count"`
	HeldNodes   string         `db:"held_nodes"`
	Note        string         `db:"note"`
	PerNode     sql.NullString `db:"per_node"`
	Version     int64          `db:"version"`
}

const bookingCols = `id, cluster, tenant, kind, resource, count, start_at, end_at, purpose, state, created_by, created_at, updated_at,
	cancelled_at, cancelled_by, held_name, held_start, held_end, held_count, held_nodes, note, per_node, version`

func toRow(cluster string, b reserve.Booking) bookingRow {
	r := bookingRow{
		ID: b.ID, Cluster: cluster, Tenant: b.Tenant, Kind: string(b.Kind), Resource: string(b.Resource()), Count: b.Count,
		StartAt: b.Start.UTC(), EndAt: b.End.UTC(), Purpose: b.Purpose, State: string(b.State), CreatedBy: b.CreatedBy,
		CreatedAt: b.CreatedAt.UTC().Truncate(time.Microsecond), UpdatedAt: b.UpdatedAt.UTC().Truncate(time.Microsecond), CancelledBy: b.CancelledBy,
		Note: clip(b.Note, 1024), Version: b.Version,
	}
	if !b.CancelledAt.IsZero() {
		r.CancelledAt = sql.NullTime{Time: b.CancelledAt.UTC().Truncate(time.Microsecond), Valid: true}
	}
	r.HeldName, r.HeldStart, r.HeldEnd, r.HeldCount, r.HeldNodes = heldCols(b.Held)
	if b.PerNode != nil {
		r.PerNode = sql.NullString{String: formatPerNode(b.PerNode), Valid: true}
	}
	return r
}

// formatPerNode writes Booking.PerNode as the per_node column holds it:
// "type:count" by type, comma-separated ("" for none).
func formatPerNode(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	return reserve.FormatPerNode(m)
}

// parsePerNode reads the per_node column back; a value it cannot read is
// an error (the booking's charge depends on it).
func parsePerNode(s string) (map[string]int, error) {
	out := map[string]int{}
	if s == "" {
		return out, nil
	}
	for p := range strings.SplitSeq(s, ",") {
		t, c, ok := strings.Cut(p, ":")
		n, err := strconv.Atoi(c)
		if !ok || t == "" || err != nil || n < 0 {
			return nil, fmt.Errorf("per_node %q: %q is not TYPE:COUNT", s, p)
		}
		if _, dup := out[t]; dup {
			return nil, fmt.Errorf("per_node %q: type %s twice", s, t)
		}
		out[t] = n
	}
	return out, nil
}

func heldCols(h reserve.Held) (string, sql.NullTime, sql.NullTime, int, string) {
	if h.IsZero() { // no reservation; where it last was stays
		return "", sql.NullTime{}, sql.NullTime{}, 0, strings.Join(h.Nodes, ",")
	}
	return h.Reservation, sql.NullTime{Time: h.Start.UTC(), Valid: true}, sql.NullTime{Time: h.End.UTC(), Valid: true}, h.Count, strings.Join(h.Nodes, ",")
}

func (r bookingRow) booking() (reserve.Booking, error) {
	b := reserve.Booking{
		ID: r.ID, Tenant: r.Tenant, Kind: reserve.Kind(r.Kind), Count: r.Count, Start: r.StartAt.UTC(), End: r.EndAt.UTC(),
		Purpose: r.Purpose, State: reserve.State(r.State), CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		CancelledBy: r.CancelledBy, Note: r.Note, Version: r.Version,
	}
	_, name := reserve.Resource(r.Resource).Split()
	if b.Kind == reserve.KindNode {
		b.NodeClass = name
	} else {
		b.GPUType = name
	}
	if r.CancelledAt.Valid {
		b.CancelledAt = r.CancelledAt.Time.UTC()
	}
	if r.HeldName != "" {
		b.Held = reserve.Held{Reservation: r.HeldName, Start: r.HeldStart.Time.UTC(), End: r.HeldEnd.Time.UTC(), Count: r.HeldCount}
	}
	if r.HeldNodes != "" {
		b.Held.Nodes = strings.Split(r.HeldNodes, ",")
	}
	if r.PerNode.Valid {
		per, err := parsePerNode(r.PerNode.String)
		if err != nil {
			return b, fmt.Errorf("booking %d: %w", r.ID, err)
		}
		b.PerNode = per
	}
	return b, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

type queryer interface {
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
	GetContext(ctx context.Context, dest any, query string, args ...any) error
}

func (s *DB) selectBookings(ctx context.Context, q queryer, f reserve.Filter, forUpdate bool) ([]reserve.Booking, error) {
	where := []string{"cluster = ?"}
	args := []any{s.cluster}
	if len(f.Resources) > 0 {
		where = append(where, "resource IN (?)")
		args = append(args, resourceStrings(f.Resources))
	}
	if f.Tenant != "" {
		where = append(where, "tenant = ?")
		args = append(args, f.Tenant)
	}
	if !f.From.IsZero() || !f.To.IsZero() {
		where = append(where, "span_end > span_start")
	}
	if !f.From.IsZero() {
		where = append(where, "span_end > ?")
		args = append(args, f.From.UTC())
	}
	if !f.To.IsZero() {
		where = append(where, "span_start < ?")
		args = append(args, f.To.UTC())
	}
	if len(f.IDs) > 0 {
		where = append(where, "id IN (?)")
		args = append(args, f.IDs)
	}
	query := `SELECT ` + bookingCols + ` FROM bookings WHERE ` + strings.Join(where, " AND ") + ` ORDER BY start_at, id`
	if forUpdate {
		query += ` FOR UPDATE`
	}
	query, args, err := sqlx.In(query, args...)
	if err != nil {
		return nil, err
	}
	var rows []bookingRow
	if err := q.SelectContext(ctx, &rows, query, args...); err != nil {
		return nil, fmt.Errorf("read bookings: %w", err)
	}
	out := make([]reserve.Booking, len(rows))
	for i, r := range rows {
		if out[i], err = r.booking(); err != nil {
			return nil, fmt.Errorf("read bookings: %w", err)
		}
	}
	return out, nil
}

func (s *DB) get(ctx context.Context, q queryer, id int64, forUpdate bool) (reserve.Booking, error) {
	bs, err := s.selectBookings(ctx, q, reserve.Filter{IDs: []int64{id}}, forUpdate)
	if err != nil {
		return reserve.Booking{}, err
	}
	if len(bs) == 0 {
		return reserve.Booking{}, fmt.Errorf("booking %d: %w", id, reserve.ErrNotFound)
	}
	return bs[0], nil
}

// Get returns one booking.
func (s *DB) Get(ctx context.Context, id int64) (reserve.Booking, error) {
	return s.get(ctx, s.db, id, false)
}

// List returns the bookings f selects.
func (s *DB) List(ctx context.Context, f reserve.Filter) ([]reserve.Booking, error) {
	return s.selectBookings(ctx, s.db, f, false)
}

type maintRow struct {
	ID        int64     `db:"id"`
	Cluster   string    `db:"cluster"`
	Nodes     string    `db:"nodes"`
	StartAt   time.Time `db:"start_at"`
	EndAt     time.Time `db:"end_at"`
	Reason    string    `db:"reason"`
	CreatedBy string    `db:"created_by"`
	CreatedAt time.Time `db:"created_at"`
}

const maintCols = `id, cluster, nodes, start_at, end_at, reason, created_by, created_at`

func (r maintRow) maintenance() reserve.Maintenance {
	return reserve.Maintenance{ID: r.ID, Nodes: strings.Split(r.Nodes, ","), Start: r.StartAt.UTC(), End: r.EndAt.UTC(),
		Reason: r.Reason, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt.UTC()}
}

func (s *DB) maintenance(ctx context.Context, q queryer) ([]reserve.Maintenance, error) {
	var rows []maintRow
	if err := q.SelectContext(ctx, &rows, `SELECT `+maintCols+` FROM booking_maintenance WHERE cluster = ? ORDER BY start_at, id`, s.cluster); err != nil {
		return nil, fmt.Errorf("read maintenance windows: %w", err)
	}
	out := make([]reserve.Maintenance, len(rows))
	for i, r := range rows {
		out[i] = r.maintenance()
	}
	return out, nil
}

// Maintenance returns every maintenance window.
func (s *DB) Maintenance(ctx context.Context) ([]reserve.Maintenance, error) {
	return s.maintenance(ctx, s.db)
}

// Stored counts every booking row of the cluster.
func (s *DB) Stored(ctx context.Context) (int, error) {
	var n int
	if err := s.db.GetContext(ctx, &n, `SELECT COUNT(*) FROM bookings WHERE cluster = ?`, s.cluster); err != nil {
		return 0, fmt.Errorf("count bookings: %w", err)
	}
	return n, nil
}

// Project records the projector's view of a booking. A cancellation made
// meanwhile stays: the state is not overwritten for a cancelled booking.
func (s *DB) Project(ctx context.Context, actor string, id int64, state reserve.State, held reserve.Held, note string) error {
	return sqldb.WithTx(ctx, s.db, func(tx *sqlx.Tx) error {
		cur, err := s.get(ctx, tx, id, true)
		if err != nil {
			return err
		}
		next := cur
		if !cur.Cancelled() {
			next.State = state
		}
		next.Held, next.Note = held, clip(note, 1024)
		if next.State == cur.State && heldEqual(next.Held, cur.Held) && next.Note == cur.Note {
			return nil
		}
		name, hs, he, hc, hn := heldCols(next.Held)
		if _, err := tx.ExecContext(ctx, `UPDATE bookings SET state = ?, held_name = ?, held_start = ?, held_end = ?, held_count = ?, held_nodes = ?, note = ?,
			version = version + 1 WHERE cluster = ? AND id = ?`, string(next.State), name, hs, he, hc, hn, next.Note, s.cluster, id); err != nil {
			return fmt.Errorf("record projection of booking %d: %w", id, err)
		}
		if err := s.recordPlacement(ctx, tx, id, cur.Held.Placed(), next.Held.Placed()); err != nil {
			return err
		}
		if next.State == cur.State && heldSameWindow(next.Held, cur.Held) {
			return nil // a note, or the nodes Slurm picked, are not audit events
		}
		return sqldb.Audit(ctx, tx, s.now(), actor, "project", AuditBooking, strconv.FormatInt(id, 10), cur, next)
	})
}

// recordPlacement adds a row to the booking's placement history when it
// is now on other nodes than its last row says (was and now are
// Held.Placed). An empty node list is not a placement (Slurm reports a
// reservation without the drained node it took out, or its nodes are not
// read back yet, or it moved the reservation to a node without the booked
// GPUs): the booking stays where it last was known to be.
func (s *DB) recordPlacement(ctx context.Context, tx *sqlx.Tx, id int64, was, now []string) error {
	nodes := strings.Join(now, ",")
	if nodes == "" || nodes == strings.Join(was, ",") {
		return nil // not placed, or no change since the last projection
	}
	var last []string
	if err := tx.SelectContext(ctx, &last, `SELECT nodes FROM booking_placements WHERE cluster = ? AND booking_id = ? ORDER BY since_us DESC LIMIT 1`, s.cluster, id); err != nil {
		return fmt.Errorf("read where booking %d was placed: %w", id, err)
	}
	if len(last) == 1 && last[0] == nodes {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO booking_placements (cluster, booking_id, since_us, nodes) VALUES (?, ?, ?, ?)
		ON DUPLICATE KEY UPDATE nodes = VALUES(nodes)`, s.cluster, id, s.now().UnixMicro(), nodes); err != nil {
		return fmt.Errorf("record where booking %d is placed: %w", id, err)
	}
	return nil
}

// Placements implements reserve.Store: one query.
func (s *DB) Placements(ctx context.Context) (map[int64][]reserve.Placement, error) {
	var rows []struct {
		ID    int64  `db:"booking_id"`
		Since int64  `db:"since_us"`
		Nodes string `db:"nodes"`
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT booking_id, since_us, nodes FROM booking_placements WHERE cluster = ? ORDER BY booking_id, since_us`, s.cluster); err != nil {
		return nil, fmt.Errorf("read booking placements: %w", err)
	}
	out := map[int64][]reserve.Placement{}
	for _, r := range rows {
		p := reserve.Placement{Since: time.UnixMicro(r.Since).UTC()}
		if r.Nodes != "" {
			p.Nodes = strings.Split(r.Nodes, ",")
		}
		out[r.ID] = append(out[r.ID], p)
	}
	return out, nil
}

// heldSameWindow: the same reservation, window and count (the node list
// may differ: Slurm picks it, and the projector learns it a run later).
func heldSameWindow(a, b reserve.Held) bool {
	return a.Reservation == b.Reservation && a.Start.Equal(b.Start) && a.End.Equal(b.End) && a.Count == b.Count
}

func heldEqual(a, b reserve.Held) bool {
	return a.Reservation == b.Reservation && a.Start.Equal(b.Start) && a.End.Equal(b.End) && a.Count == b.Count && strings.Join(a.Nodes, ",") == strings.Join(b.Nodes, ",")
}

// dbTx is the store inside Atomic.
type dbTx struct {
	s  *DB
	tx *sqlx.Tx
}

// Get is a locking read: the row stays held until the transaction ends.
func (t *dbTx) Get(ctx context.Context, id int64) (reserve.Booking, error) {
	return t.s.get(ctx, t.tx, id, true)
}

func (t *dbTx) Bookings(ctx context.Context, f reserve.Filter) ([]reserve.Booking, error) {
	return t.s.selectBookings(ctx, t.tx, f, false)
}

func (t *dbTx) Maintenance(ctx context.Context) ([]reserve.Maintenance, error) {
	return t.s.maintenance(ctx, t.tx)
}

func (t *dbTx) Insert(ctx context.Context, actor string, b reserve.Booking) (reserve.Booking, error) {
	b.Version = 0
	r := toRow(t.s.cluster, b)
	res, err := t.tx.NamedExecContext(ctx, `INSERT INTO bookings (cluster, tenant, kind, resource, count, start_at, end_at, purpose, state,
		created_by, created_at, updated_at, cancelled_at, cancelled_by, held_name, held_start, held_end, held_count, held_nodes, note, per_node)
		VALUES (:cluster, :tenant, :kind, :resource, :count, :start_at, :end_at, :purpose, :state,
		:created_by, :created_at, :updated_at, :cancelled_at, :cancelled_by, :held_name, :held_start, :held_end, :held_count, :held_nodes, :note, :per_node)`, r)
	if err != nil {
		return b, fmt.Errorf("insert booking: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return b, fmt.Errorf("insert booking: %w", err)
	}
	b.ID, b.Version = id, 0
	if err := sqldb.Audit(ctx, t.tx, t.s.now(), actor, "create", AuditBooking, strconv.FormatInt(id, 10), nil, b); err != nil {
		return b, err
	}
	return b, nil
}

// Update writes b over the stored row when the row still has b.Version
// (read, locked, in this transaction), else nothing (ErrChanged).
func (t *dbTx) Update(ctx context.Context, actor, action string, b reserve.Booking) error {
	before, err := t.s.get(ctx, t.tx, b.ID, true)
	if err != nil {
		return err
	}
	if before.Version != b.Version {
		return changed(b.ID, b.Version, before.Version)
	}
	r := toRow(t.s.cluster, b)
	res, err := t.tx.NamedExecContext(ctx, `UPDATE bookings SET count = :count, start_at = :start_at, end_at = :end_at, purpose = :purpose,
		state = :state, updated_at = :updated_at, cancelled_at = :cancelled_at, cancelled_by = :cancelled_by, per_node = :per_node,
		version = version + 1 WHERE cluster = :cluster AND id = :id AND version = :version`, r)
	if err != nil {
		return fmt.Errorf("update booking %d: %w", b.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return changed(b.ID, b.Version, -1)
	}
	after := b
	after.Held, after.Note, after.Version = before.Held, before.Note, b.Version+1
	return sqldb.Audit(ctx, t.tx, t.s.now(), actor, action, AuditBooking, strconv.FormatInt(b.ID, 10), before, after)
}

// changed is Update's refusal of a write over another version than the
// stored one (now; -1 when unknown).
func changed(id, read, now int64) error {
	if now < 0 {
		return fmt.Errorf("booking %d (version %d): %w", id, read, reserve.ErrChanged)
	}
	return fmt.Errorf("booking %d (version %d, now %d): %w", id, read, now, reserve.ErrChanged)
}

func (t *dbTx) InsertMaintenance(ctx context.Context, actor string, m reserve.Maintenance) (reserve.Maintenance, error) {
	r := maintRow{Cluster: t.s.cluster, Nodes: strings.Join(m.Nodes, ","), StartAt: m.Start.UTC(), EndAt: m.End.UTC(), Reason: m.Reason,
		CreatedBy: m.CreatedBy, CreatedAt: m.CreatedAt.UTC().Truncate(time.Microsecond)}
	res, err := t.tx.NamedExecContext(ctx, `INSERT INTO booking_maintenance (cluster, nodes, start_at, end_at, reason, created_by, created_at)
		VALUES (:cluster, :nodes, :start_at, :end_at, :reason, :created_by, :created_at)`, r)
	if err != nil {
		return m, fmt.Errorf("insert maintenance window: %w", err)
	}
	if m.ID, err = res.LastInsertId(); err != nil {
		return m, err
	}
	return m, sqldb.Audit(ctx, t.tx, t.s.now(), actor, "create", AuditMaintenance, strconv.FormatInt(m.ID, 10), nil, m)
}

func (t *dbTx) DeleteMaintenance(ctx context.Context, actor string, id int64) (reserve.Maintenance, error) {
	var rows []maintRow
	if err := t.tx.SelectContext(ctx, &rows, `SELECT `+maintCols+` FROM booking_maintenance WHERE cluster = ? AND id = ? FOR UPDATE`, t.s.cluster, id); err != nil {
		return reserve.Maintenance{}, fmt.Errorf("read maintenance window %d: %w", id, err)
	}
	if len(rows) == 0 {
		return reserve.Maintenance{}, fmt.Errorf("maintenance window %d: %w", id, reserve.ErrNotFound)
	}
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM booking_maintenance WHERE cluster = ? AND id = ?`, t.s.cluster, id); err != nil {
		return reserve.Maintenance{}, fmt.Errorf("delete maintenance window %d: %w", id, err)
	}
	m := rows[0].maintenance()
	return m, sqldb.Audit(ctx, t.tx, t.s.now(), actor, "delete", AuditMaintenance, strconv.FormatInt(id, 10), m, nil)
}
