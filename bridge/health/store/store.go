package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/check"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// DB is the MariaDB store of one cluster's health records.
type DB struct {
	db      *sqlx.DB
	cluster string
}

var _ health.Store = (*DB)(nil)

// New returns the store for cluster on db (migrated by sqldb.Migrate).
func New(db *sqlx.DB, cluster string) *DB { return &DB{db: db, cluster: cluster} }

type nodeRow struct {
	Cluster    string    `db:"cluster"`
	Node       string    `db:"node"`
	State      string    `db:"state"`
	Since      time.Time `db:"since"`
	Passes     int       `db:"passes"`
	Needed     int       `db:"needed"`
	Reason     string    `db:"reason"`
	ChecksJSON string    `db:"checks_json"`
	Fatal      bool      `db:"fatal"`
	Version    int64     `db:"version"`
	UpdatedAt  time.Time `db:"updated_at"`
}

func (r nodeRow) node() (health.Node, error) {
	n := health.Node{Name: r.Node, State: health.State(r.State), Since: r.Since.UTC(), Passes: r.Passes, Needed: r.Needed,
		Reason: r.Reason, Fatal: r.Fatal, Version: r.Version}
	if err := json.Unmarshal([]byte(r.ChecksJSON), &n.Checks); err != nil {
		return n, fmt.Errorf("health record of %s: checks: %w", r.Node, err)
	}
	return n, nil
}

func (s *DB) nodeRow(n health.Node) (nodeRow, error) {
	checks := n.Checks
	if checks == nil {
		checks = []string{}
	}
	b, err := json.Marshal(checks)
	if err != nil {
		return nodeRow{}, err
	}
	return nodeRow{Cluster: s.cluster, Node: n.Name, State: string(n.State), Since: n.Since.UTC(), Passes: n.Passes,
		Needed: n.Needed, Reason: clip(n.Reason, 512), ChecksJSON: string(b), Fatal: n.Fatal, Version: n.Version,
		UpdatedAt: time.Now().UTC()}, nil
}

const nodeCols = `cluster, node, state, since, passes, needed, reason, checks_json, fatal, version, updated_at`

// Nodes returns every record.
func (s *DB) Nodes(ctx context.Context) (map[string]health.Node, error) {
	var rows []nodeRow
	if err := s.db.SelectContext(ctx, &rows, `SELECT `+nodeCols+` FROM health_nodes WHERE cluster = ?`, s.cluster); err != nil {
		return nil, fmt.Errorf("read health records: %w", err)
	}
	out := make(map[string]health.Node, len(rows))
	for _, r := range rows {
		n, err := r.node()
		if err != nil {
			return nil, err
		}
		out[n.Name] = n
	}
	return out, nil
}

// putNode inserts (Version 0) or compare-and-sets a record.
func (s *DB) putNode(ctx context.Context, tx *sqlx.Tx, n health.Node) (health.Node, error) {
	row, err := s.nodeRow(n)
	if err != nil {
		return health.Node{}, err
	}
	old := row.Version
	row.Version = old + 1
	if old == 0 {
		_, err := tx.NamedExecContext(ctx, `INSERT INTO health_nodes (`+nodeCols+`) VALUES
			(:cluster, :node, :state, :since, :passes, :needed, :reason, :checks_json, :fatal, :version, :updated_at)`, row)
		if isDuplicate(err) {
			return health.Node{}, fmt.Errorf("node %s: %w", n.Name, health.ErrConflict)
		}
		if err != nil {
			return health.Node{}, fmt.Errorf("insert health record of %s: %w", n.Name, err)
		}
	} else {
		res, err := tx.ExecContext(ctx, `UPDATE health_nodes SET state = ?, since = ?, passes = ?, needed = ?, reason = ?,
			checks_json = ?, fatal = ?, version = ?, updated_at = ? WHERE cluster = ? AND node = ? AND version = ?`,
			row.State, row.Since, row.Passes, row.Needed, row.Reason, row.ChecksJSON, row.Fatal, row.Version, row.UpdatedAt,
			s.cluster, n.Name, old)
		if err != nil {
			return health.Node{}, fmt.Errorf("update health record of %s: %w", n.Name, err)
		}
		if k, _ := res.RowsAffected(); k != 1 {
			return health.Node{}, fmt.Errorf("node %s: %w", n.Name, health.ErrConflict)
		}
	}
	n.Version = row.Version
	n.Since = row.Since
	return n, nil
}

func isDuplicate(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Error 1062")
}

type eventRow struct {
	Cluster   string    `db:"cluster"`
	Node      string    `db:"node"`
	At        time.Time `db:"at"`
	FromState string    `db:"from_state"`
	ToState   string    `db:"to_state"`
	Reason    string    `db:"reason"`
	RunID     int64     `db:"run_id"`
	Fatal     bool      `db:"fatal"`
	Actor     string    `db:"actor"`
}

func (s *DB) insertEvent(ctx context.Context, tx *sqlx.Tx, ev health.Event) error {
	_, err := tx.NamedExecContext(ctx, `INSERT INTO health_events (cluster, node, at, from_state, to_state, reason, run_id, fatal, actor)
		VALUES (:cluster, :node, :at, :from_state, :to_state, :reason, :run_id, :fatal, :actor)`,
		eventRow{Cluster: s.cluster, Node: ev.Node, At: ev.At.UTC(), FromState: string(ev.From), ToState: string(ev.To),
			Reason: clip(ev.Reason, 512), RunID: ev.RunID, Fatal: ev.Fatal, Actor: ev.Actor})
	if err != nil {
		return fmt.Errorf("insert health event of %s: %w", ev.Node, err)
	}
	return nil
}

// PutNode writes a record and its event in one transaction.
func (s *DB) PutNode(ctx context.Context, n health.Node, ev *health.Event) (health.Node, error) {
	var out health.Node
	err := sqldb.WithTx(ctx, s.db, func(tx *sqlx.Tx) error {
		var err error
		if out, err = s.putNode(ctx, tx, n); err != nil {
			return err
		}
		if ev != nil {
			return s.insertEvent(ctx, tx, *ev)
		}
		return nil
	})
	return out, err
}

type runRow struct {
	ID          int64        `db:"id"`
	Cluster     string       `db:"cluster"`
	Key         string       `db:"run_key"`
	Node        string       `db:"node"`
	Peers       string       `db:"peers"`
	Checks      string       `db:"checks"`
	Purpose     string       `db:"purpose"`
	Schedule    string       `db:"schedule_name"`
	Held        bool         `db:"held"`
	Tenant      string       `db:"tenant"`
	Actor       string       `db:"actor"`
	State       string       `db:"state"`
	JobID       int64        `db:"job_id"`
	Model       string       `db:"model"`
	GPUs        int          `db:"gpus"`
	RequestedAt time.Time    `db:"requested_at"`
	FinishedAt  sql.NullTime `db:"finished_at"`
	Note        string       `db:"note"`
}

const runCols = `id, cluster, run_key, node, peers, checks, purpose, schedule_name, held, tenant, actor, state, job_id, model, gpus, requested_at, finished_at, note`

func (r runRow) run() health.Run {
	out := health.Run{ID: r.ID, Key: r.Key, Node: r.Node, Purpose: health.Purpose(r.Purpose), Schedule: r.Schedule,
		Held: r.Held, Tenant: r.Tenant, Actor: r.Actor, State: health.RunState(r.State), JobID: r.JobID, Model: r.Model,
		GPUs: r.GPUs, RequestedAt: r.RequestedAt.UTC(), Note: r.Note}
	if r.Checks != "" {
		out.Checks = strings.Split(r.Checks, ",")
	}
	if r.Peers != "" {
		out.Peers = strings.Split(r.Peers, ",")
	}
	if r.FinishedAt.Valid {
		out.FinishedAt = r.FinishedAt.Time.UTC()
	}
	return out
}

// CreateRun stores a new run.
func (s *DB) CreateRun(ctx context.Context, r health.Run) (health.Run, error) {
	r.State = health.RunSubmitting
	r.RequestedAt = r.RequestedAt.UTC().Truncate(time.Microsecond)
	id, err := insertRun(ctx, s.db, s.cluster, r)
	if err != nil {
		return health.Run{}, err
	}
	r.ID = id
	return r, nil
}

// CreateTenantRun stores a tenant's run while it is under max runs since
// since. The transaction first writes the tenant's row of
// health_tenant_checks (a row lock every other writer of that tenant waits
// on; on Galera, a write-write conflict), then counts and inserts.
// A deadlock (first inserts of a tenant's row at once) or a Galera
// certification failure is retried by sqldb.WithTx, within its bound.
func (s *DB) CreateTenantRun(ctx context.Context, r health.Run, since time.Time, max int) (health.Run, error) {
	r.State = health.RunSubmitting
	r.RequestedAt = r.RequestedAt.UTC().Truncate(time.Microsecond)
	id, err := s.createTenantRun(ctx, r, since, max)
	if err != nil {
		return health.Run{}, err
	}
	r.ID = id
	return r, nil
}

func (s *DB) createTenantRun(ctx context.Context, r health.Run, since time.Time, max int) (int64, error) {
	var id int64
	err := sqldb.WithTx(ctx, s.db, func(tx *sqlx.Tx) error {
		// The row always changes (at least by a microsecond), so that it is
		// written, and on Galera certified, even when two runs share a time.
		if _, err := tx.ExecContext(ctx, `INSERT INTO health_tenant_checks (cluster, tenant, last_at) VALUES (?, ?, ?)
			ON DUPLICATE KEY UPDATE last_at = GREATEST(VALUES(last_at), last_at + INTERVAL 1 MICROSECOND)`, s.cluster, r.Tenant, r.RequestedAt); err != nil {
			return fmt.Errorf("lock the health checks of tenant %s: %w", r.Tenant, err)
		}
		var n int
		if err := tx.GetContext(ctx, &n, `SELECT COUNT(*) FROM health_runs WHERE cluster = ? AND tenant = ? AND requested_at >= ?`,
			s.cluster, r.Tenant, since.UTC()); err != nil {
			return fmt.Errorf("count health runs of tenant %s: %w", r.Tenant, err)
		}
		if n >= max {
			return health.TenantCapError(r.Tenant, n, max)
		}
		var err error
		id, err = insertRun(ctx, tx, s.cluster, r)
		return err
	})
	return id, err
}

// insertRun inserts run r (State and RequestedAt set) and returns its id.
func insertRun(ctx context.Context, ex sqlx.ExecerContext, cluster string, r health.Run) (int64, error) {
	res, err := ex.ExecContext(ctx, `INSERT INTO health_runs (cluster, run_key, node, peers, checks, purpose, schedule_name, held,
		tenant, actor, state, job_id, model, gpus, requested_at, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, '')`,
		cluster, r.Key, r.Node, strings.Join(r.Peers, ","), strings.Join(r.Checks, ","), string(r.Purpose), r.Schedule, r.Held, r.Tenant,
		clip(r.Actor, 128), string(r.State), r.Model, r.GPUs, r.RequestedAt)
	if err != nil {
		return 0, fmt.Errorf("store health run on %s: %w", r.Node, err)
	}
	return res.LastInsertId()
}

// SetRunJob records the run's job.
func (s *DB) SetRunJob(ctx context.Context, id, jobID int64) error {
	// In a transaction, so that a leader's write is fenced with its lease
	// (sqldb.WithTx).
	var n int64
	err := sqldb.WithTx(ctx, s.db, func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE health_runs SET job_id = ?, state = ? WHERE cluster = ? AND id = ? AND state IN (?, ?)`,
			jobID, string(health.RunSubmitted), s.cluster, id, string(health.RunSubmitting), string(health.RunSubmitted))
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	if err != nil {
		return fmt.Errorf("record the job of health run %d: %w", id, err)
	}
	if n != 1 {
		return fmt.Errorf("health run %d: not in flight (or job already %d)", id, jobID)
	}
	return nil
}

// InFlight returns the unfinished runs, oldest first.
func (s *DB) InFlight(ctx context.Context) ([]health.Run, error) {
	var rows []runRow
	if err := s.db.SelectContext(ctx, &rows, `SELECT `+runCols+` FROM health_runs WHERE cluster = ? AND state IN (?, ?) ORDER BY id`,
		s.cluster, string(health.RunSubmitting), string(health.RunSubmitted)); err != nil {
		return nil, fmt.Errorf("read health runs in flight: %w", err)
	}
	out := make([]health.Run, len(rows))
	for i, r := range rows {
		out[i] = r.run()
	}
	return out, nil
}

type resultRow struct {
	Cluster    string       `db:"cluster"`
	RunID      int64        `db:"run_id"`
	Node       string       `db:"node"`
	Check      string       `db:"check_name"`
	Verdict    string       `db:"verdict"`
	Reason     string       `db:"reason"`
	ValuesJSON string       `db:"values_json"`
	StartedAt  sql.NullTime `db:"started_at"`
	EndedAt    sql.NullTime `db:"ended_at"`
	ExitCode   int          `db:"exit_code"`
	JobID      int64        `db:"job_id"`
	Tenant     string       `db:"tenant"`
	Purpose    string       `db:"purpose"`
	At         time.Time    `db:"at"`
}

const resultCols = `cluster, run_id, node, check_name, verdict, reason, values_json, started_at, ended_at, exit_code, job_id, tenant, purpose, at`

func nullTime(t time.Time) sql.NullTime {
	if t.IsZero() {
		return sql.NullTime{}
	}
	return sql.NullTime{Time: t.UTC(), Valid: true}
}

func (r resultRow) result() (health.StoredResult, error) {
	out := health.StoredResult{RunID: r.RunID, Node: r.Node, Check: r.Check, Verdict: check.Verdict(r.Verdict), Reason: r.Reason,
		ExitCode: r.ExitCode, JobID: r.JobID, Tenant: r.Tenant, Purpose: health.Purpose(r.Purpose), At: r.At.UTC()}
	if r.StartedAt.Valid {
		out.Start = r.StartedAt.Time.UTC()
	}
	if r.EndedAt.Valid {
		out.End = r.EndedAt.Time.UTC()
	}
	if err := json.Unmarshal([]byte(r.ValuesJSON), &out.Values); err != nil {
		return out, fmt.Errorf("health result of run %d %s: values: %w", r.RunID, r.Check, err)
	}
	if len(out.Values) == 0 {
		out.Values = nil
	}
	return out, nil
}

// FinishRun writes a finished run with its results, evidence, records and
// events in one transaction.
func (s *DB) FinishRun(ctx context.Context, f health.Finish) (bool, error) {
	// WithTx may run the transaction more than once (a conflict is run
	// again from the start): each attempt decides won afresh, so that an
	// attempt that won and was then rolled back does not claim a run that
	// another process finished meanwhile.
	won := false
	err := sqldb.WithTx(ctx, s.db, func(tx *sqlx.Tx) error {
		won = false
		var ev []byte
		if len(f.Evidence) > 0 {
			ev = f.Evidence
		}
		res, err := tx.ExecContext(ctx, `UPDATE health_runs SET state = ?, finished_at = ?, note = ?, evidence = ?, evidence_bytes = ?
			WHERE cluster = ? AND id = ? AND state IN (?, ?)`,
			string(f.Run.State), f.Run.FinishedAt.UTC(), clip(f.Run.Note, 512), ev, len(f.Evidence),
			s.cluster, f.Run.ID, string(health.RunSubmitting), string(health.RunSubmitted))
		if err != nil {
			return fmt.Errorf("finish health run %d: %w", f.Run.ID, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil // finished by another process
		}
		for _, n := range f.Nodes {
			if _, err := s.putNode(ctx, tx, n); err != nil {
				return err
			}
		}
		for _, e := range f.Events {
			if err := s.insertEvent(ctx, tx, e); err != nil {
				return err
			}
		}
		if len(f.Results) > 0 {
			rows := make([]resultRow, len(f.Results))
			for i, r := range f.Results {
				vals := r.Values
				if vals == nil {
					vals = []check.Value{}
				}
				b, err := json.Marshal(vals)
				if err != nil {
					return err
				}
				rows[i] = resultRow{Cluster: s.cluster, RunID: r.RunID, Node: r.Node, Check: r.Check, Verdict: string(r.Verdict),
					Reason: clip(r.Reason, 1024), ValuesJSON: string(b), StartedAt: nullTime(r.Start), EndedAt: nullTime(r.End),
					ExitCode: r.ExitCode, JobID: r.JobID, Tenant: r.Tenant, Purpose: string(r.Purpose), At: r.At.UTC()}
			}
			if _, err := tx.NamedExecContext(ctx, `INSERT INTO health_results (`+resultCols+`) VALUES (:cluster, :run_id, :node,
				:check_name, :verdict, :reason, :values_json, :started_at, :ended_at, :exit_code, :job_id, :tenant, :purpose, :at)`, rows); err != nil {
				return fmt.Errorf("store health results of run %d: %w", f.Run.ID, err)
			}
		}
		won = true
		return nil
	})
	if err != nil {
		return false, err
	}
	return won, nil
}

// Run returns one run.
func (s *DB) Run(ctx context.Context, id int64) (health.Run, error) {
	var r runRow
	err := s.db.GetContext(ctx, &r, `SELECT `+runCols+` FROM health_runs WHERE cluster = ? AND id = ?`, s.cluster, id)
	if errors.Is(err, sql.ErrNoRows) {
		return health.Run{}, fmt.Errorf("health run %d: %w", id, health.ErrNotFound)
	}
	if err != nil {
		return health.Run{}, fmt.Errorf("read health run %d: %w", id, err)
	}
	return r.run(), nil
}

// Evidence returns a run's stored output.
func (s *DB) Evidence(ctx context.Context, id int64) ([]byte, error) {
	var b []byte
	err := s.db.GetContext(ctx, &b, `SELECT COALESCE(evidence, '') FROM health_runs WHERE cluster = ? AND id = ?`, s.cluster, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("health run %d: %w", id, health.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read evidence of health run %d: %w", id, err)
	}
	return b, nil
}

// Results returns results, newest first.
func (s *DB) Results(ctx context.Context, f health.ResultFilter) ([]health.StoredResult, error) {
	q := `SELECT ` + resultCols + ` FROM health_results WHERE cluster = ?`
	args := []any{s.cluster}
	if f.Node != "" {
		q += ` AND node = ?`
		args = append(args, f.Node)
	}
	if f.Check != "" {
		q += ` AND check_name = ?`
		args = append(args, f.Check)
	}
	if f.Tenant != "" {
		q += ` AND tenant = ?`
		args = append(args, f.Tenant)
	}
	if f.VisibleTo != "" {
		q += ` AND tenant IN ('', ?)`
		args = append(args, f.VisibleTo)
	}
	if f.RunID != 0 {
		q += ` AND run_id = ?`
		args = append(args, f.RunID)
	}
	if !f.Since.IsZero() {
		q += ` AND at >= ?`
		args = append(args, f.Since.UTC())
	}
	limit := f.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	q += ` ORDER BY at DESC, run_id DESC, id ASC LIMIT ?`
	args = append(args, limit)
	var rows []resultRow
	if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, fmt.Errorf("read health results: %w", err)
	}
	out := make([]health.StoredResult, 0, len(rows))
	for _, r := range rows {
		res, err := r.result()
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

// Events returns a node's events (every node's when node is empty) since a
// time, oldest first.
func (s *DB) Events(ctx context.Context, node string, since time.Time) ([]health.Event, error) {
	q := `SELECT id, node, at, from_state, to_state, reason, run_id, fatal, actor FROM health_events WHERE cluster = ? AND at >= ?`
	args := []any{s.cluster, since.UTC()}
	if node != "" {
		q += ` AND node = ?`
		args = append(args, node)
	}
	var rows []struct {
		ID int64 `db:"id"`
		eventRow
	}
	if err := s.db.SelectContext(ctx, &rows, q+` ORDER BY at, id`, args...); err != nil {
		return nil, fmt.Errorf("read health events: %w", err)
	}
	out := make([]health.Event, len(rows))
	for i, r := range rows {
		out[i] = health.Event{ID: r.ID, Node: r.Node, At: r.At.UTC(), From: health.State(r.FromState), To: health.State(r.ToState),
			Reason: r.Reason, RunID: r.RunID, Fatal: r.Fatal, Actor: r.Actor}
	}
	return out, nil
}

// TenantRuns counts a tenant's runs since a time.
func (s *DB) TenantRuns(ctx context.Context, tenant string, since time.Time) (int, error) {
	var n int
	if err := s.db.GetContext(ctx, &n, `SELECT COUNT(*) FROM health_runs WHERE cluster = ? AND tenant = ? AND requested_at >= ?`,
		s.cluster, tenant, since.UTC()); err != nil {
		return 0, fmt.Errorf("count health runs of tenant %s: %w", tenant, err)
	}
	return n, nil
}

// Override writes an admin's change, its event and an audit row in one
// transaction.
func (s *DB) Override(ctx context.Context, o health.Override) (health.Node, error) {
	var out health.Node
	err := sqldb.WithTx(ctx, s.db, func(tx *sqlx.Tx) error {
		var err error
		if out, err = s.putNode(ctx, tx, o.Node); err != nil {
			return err
		}
		if err := s.insertEvent(ctx, tx, o.Event); err != nil {
			return err
		}
		return sqldb.Audit(ctx, tx, o.Event.At, o.Actor, o.Action, "node", s.cluster+"/"+o.Node.Name, o.Before, o.After)
	})
	return out, err
}

// pruneBatch bounds one prune's deletes (the next cycle continues).
const pruneBatch = 1000

// Prune deletes finished runs older than before, with their results and
// evidence, in one batch.
func (s *DB) Prune(ctx context.Context, before time.Time) (int64, error) {
	var ids []int64
	if err := s.db.SelectContext(ctx, &ids, `SELECT id FROM health_runs WHERE cluster = ? AND state IN (?, ?) AND finished_at < ?
		ORDER BY id LIMIT ?`, s.cluster, string(health.RunDone), string(health.RunAborted), before.UTC(), pruneBatch); err != nil {
		return 0, fmt.Errorf("find old health runs: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	var n int64
	err := sqldb.WithTx(ctx, s.db, func(tx *sqlx.Tx) error {
		q, args, err := sqlx.In(`DELETE FROM health_results WHERE cluster = ? AND run_id IN (?)`, s.cluster, ids)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("prune health results: %w", err)
		}
		q, args, err = sqlx.In(`DELETE FROM health_runs WHERE cluster = ? AND id IN (?)`, s.cluster, ids)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("prune health runs: %w", err)
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return n, err
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 3
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}
