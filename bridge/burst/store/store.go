package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// DB is the MariaDB store of one cluster's burst records.
type DB struct {
	db      *sqlx.DB
	cluster string
}

var _ burst.Store = (*DB)(nil)

// New returns the store for cluster on db (migrated by sqldb.Migrate).
func New(db *sqlx.DB, cluster string) *DB { return &DB{db: db, cluster: cluster} }

// batch is the number of rows per multi-row INSERT.
const batch = 500

type moveRow struct {
	Cluster     string     `db:"cluster"`
	JobID       int64      `db:"job_id"`
	MovedAt     time.Time  `db:"moved_at"`
	Tenant      string     `db:"tenant"`
	User        string     `db:"user_name"`
	GPUs        string     `db:"gpus"`
	GPUCount    int64      `db:"gpu_count"`
	SlurmReason string     `db:"slurm_reason"`
	Estimate    int64      `db:"estimate"`
	SubmitTime  *time.Time `db:"submit_time"`
	RecordedAt  time.Time  `db:"recorded_at"`
}

// RecordMoves inserts the moves not stored yet and returns how many were new.
func (s *DB) RecordMoves(ctx context.Context, at time.Time, ms []burst.MoveRecord) (int, error) {
	added := 0
	for start := 0; start < len(ms); start += batch {
		chunk := ms[start:min(start+batch, len(ms))]
		rows := make([]moveRow, len(chunk))
		for i, m := range chunk {
			rows[i] = moveRow{
				Cluster: s.cluster, JobID: m.JobID, MovedAt: m.MovedAt.UTC().Truncate(time.Second), Tenant: m.Tenant,
				User: m.User, GPUs: m.GPUs, GPUCount: m.GPUCount, SlurmReason: m.SlurmReason, Estimate: m.Estimate,
				RecordedAt: at.UTC(),
			}
			if !m.SubmitTime.IsZero() {
				t := m.SubmitTime.UTC()
				rows[i].SubmitTime = &t
			}
		}
		// In a transaction, so that a leader's write is fenced with its
		// lease (sqldb.WithTx): a deposed leader records no move.
		var n int64
		err := sqldb.WithTx(ctx, s.db, func(tx *sqlx.Tx) error {
			res, err := tx.NamedExecContext(ctx, `INSERT IGNORE INTO burst_moves
				(cluster, job_id, moved_at, tenant, user_name, gpus, gpu_count, slurm_reason, estimate, submit_time, recorded_at)
				VALUES (:cluster, :job_id, :moved_at, :tenant, :user_name, :gpus, :gpu_count, :slurm_reason, :estimate, :submit_time, :recorded_at)`, rows)
			if err != nil {
				return err
			}
			n, _ = res.RowsAffected()
			return nil
		})
		if err != nil {
			return added, fmt.Errorf("insert burst moves: %w", err)
		}
		added += int(n)
	}
	return added, nil
}

type refusalRow struct {
	Cluster     string    `db:"cluster"`
	JobID       int64     `db:"job_id"`
	Tenant      string    `db:"tenant"`
	User        string    `db:"user_name"`
	GPUs        string    `db:"gpus"`
	GPUCount    int64     `db:"gpu_count"`
	Reason      string    `db:"reason"`
	Detail      string    `db:"detail"`
	SlurmReason string    `db:"slurm_reason"`
	FirstAt     time.Time `db:"first_at"`
	LastAt      time.Time `db:"last_at"`
}

// SyncRefusals replaces the stored refusals with rs, in one transaction,
// and returns those that are new or changed reason.
func (s *DB) SyncRefusals(ctx context.Context, at time.Time, rs []burst.Refusal) ([]burst.Refusal, error) {
	// Whole microseconds: DATETIME(6) keeps exactly this, so the rows of
	// this cycle compare equal to at below.
	at = at.UTC().Truncate(time.Microsecond)
	var changed []burst.Refusal
	err := sqldb.WithTx(ctx, s.db, func(tx *sqlx.Tx) error {
		var old []struct {
			JobID  int64  `db:"job_id"`
			Reason string `db:"reason"`
		}
		if err := tx.SelectContext(ctx, &old, `SELECT job_id, reason FROM burst_refusals WHERE cluster = ? FOR UPDATE`, s.cluster); err != nil {
			return fmt.Errorf("read burst refusals: %w", err)
		}
		prev := make(map[int64]string, len(old))
		for _, o := range old {
			prev[o.JobID] = o.Reason
		}
		changed = changed[:0]
		seen := make(map[int64]bool, len(rs))
		rows := make([]refusalRow, 0, len(rs))
		for _, r := range rs {
			if seen[r.JobID] {
				continue // an array record refused twice: keep the first
			}
			seen[r.JobID] = true
			if p, ok := prev[r.JobID]; !ok || p != string(r.Reason) {
				changed = append(changed, r)
			}
			rows = append(rows, refusalRow{
				Cluster: s.cluster, JobID: r.JobID, Tenant: r.Tenant, User: r.User, GPUs: r.GPUs.String(),
				GPUCount: r.GPUs.Total(), Reason: string(r.Reason), Detail: clip(r.Detail, 1024),
				SlurmReason: clip(r.SlurmReason, 64), FirstAt: at.Truncate(time.Second), LastAt: at,
			})
		}
		for start := 0; start < len(rows); start += batch {
			// first_at is assigned before reason, so it still sees the old
			// reason (MariaDB applies the assignments left to right).
			_, err := tx.NamedExecContext(ctx, `INSERT INTO burst_refusals
				(cluster, job_id, tenant, user_name, gpus, gpu_count, reason, detail, slurm_reason, first_at, last_at)
				VALUES (:cluster, :job_id, :tenant, :user_name, :gpus, :gpu_count, :reason, :detail, :slurm_reason, :first_at, :last_at)
				ON DUPLICATE KEY UPDATE
				first_at = IF(reason = VALUES(reason), first_at, VALUES(first_at)),
				reason = VALUES(reason), detail = VALUES(detail), slurm_reason = VALUES(slurm_reason),
				tenant = VALUES(tenant), user_name = VALUES(user_name), gpus = VALUES(gpus), gpu_count = VALUES(gpu_count),
				last_at = VALUES(last_at)`, rows[start:min(start+batch, len(rows))])
			if err != nil {
				return fmt.Errorf("write burst refusals: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM burst_refusals WHERE cluster = ? AND last_at < ?`, s.cluster, at); err != nil {
			return fmt.Errorf("clear old burst refusals: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return changed, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// StoredRefusal is a refusal as stored, with since when it holds.
type StoredRefusal = burst.StoredRefusal

// Refusals returns the stored refusals (of tenant, when not empty), by
// tenant and job.
func (s *DB) Refusals(ctx context.Context, tenant string) ([]StoredRefusal, error) {
	var rows []refusalRow
	q := `SELECT cluster, job_id, tenant, user_name, gpus, gpu_count, reason, detail, slurm_reason, first_at, last_at
		FROM burst_refusals WHERE cluster = ?`
	args := []any{s.cluster}
	if tenant != "" {
		q += ` AND tenant = ?`
		args = append(args, tenant)
	}
	if err := s.db.SelectContext(ctx, &rows, q+` ORDER BY tenant, job_id`, args...); err != nil {
		return nil, fmt.Errorf("read burst refusals: %w", err)
	}
	out := make([]StoredRefusal, len(rows))
	for i, r := range rows {
		out[i] = StoredRefusal{
			Refusal: burst.Refusal{JobID: r.JobID, Tenant: r.Tenant, User: r.User, Reason: burst.Reason(r.Reason),
				Detail: r.Detail, SlurmReason: r.SlurmReason},
			GPUs: r.GPUs, FirstAt: r.FirstAt.UTC(), LastAt: r.LastAt.UTC(),
		}
	}
	return out, nil
}

// Moves returns the moves recorded at or after since (of tenant, when not
// empty), oldest first.
func (s *DB) Moves(ctx context.Context, tenant string, since time.Time) ([]burst.MoveRecord, error) {
	var rows []moveRow
	q := `SELECT cluster, job_id, moved_at, tenant, user_name, gpus, gpu_count, slurm_reason, estimate, submit_time, recorded_at
		FROM burst_moves WHERE cluster = ? AND moved_at >= ?`
	args := []any{s.cluster, since.UTC()}
	if tenant != "" {
		q += ` AND tenant = ?`
		args = append(args, tenant)
	}
	if err := s.db.SelectContext(ctx, &rows, q+` ORDER BY moved_at, job_id`, args...); err != nil {
		return nil, fmt.Errorf("read burst moves: %w", err)
	}
	out := make([]burst.MoveRecord, len(rows))
	for i, r := range rows {
		out[i] = burst.MoveRecord{JobID: r.JobID, Tenant: r.Tenant, User: r.User, GPUs: r.GPUs, GPUCount: r.GPUCount,
			MovedAt: r.MovedAt.UTC(), SlurmReason: r.SlurmReason, Estimate: r.Estimate}
		if r.SubmitTime != nil {
			out[i].SubmitTime = r.SubmitTime.UTC()
		}
	}
	return out, nil
}
