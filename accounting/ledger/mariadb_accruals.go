package ledger

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

// ReplaceAccruals: see the method list in store.go.
func (d *DB) ReplaceAccruals(ctx context.Context, cluster string, asOf int64, runs []meter.MeasuredRun) (meter.WriteStats, error) {
	var st meter.WriteStats
	err := d.withWrite(ctx, cluster, func(tx *sqlx.Tx) error {
		st = meter.WriteStats{Runs: len(runs), Checked: len(runs)}
		closed, err := loadClosed(ctx, tx, cluster)
		if err != nil {
			return err
		}
		existing, err := loadExisting(ctx, tx, cluster, runs)
		if err != nil {
			return err
		}
		if err := d.writeLines(ctx, tx, cluster, asOf, planLines(runs, existing, closed), &st); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM usage_accrual WHERE cluster = ?", cluster); err != nil {
			return fmt.Errorf("replace accruals: %w", err)
		}
		var args []any
		n := 0
		flush := func() error {
			if n == 0 {
				return nil
			}
			_, err := tx.ExecContext(ctx, multiInsert("usage_accrual", accrualCols, 13, n), args...)
			args, n = args[:0], 0
			if err != nil {
				return fmt.Errorf("insert accruals: %w", err)
			}
			return nil
		}
		for _, mr := range runs {
			for _, u := range mr.Usages {
				if u.Final {
					continue
				}
				args = append(args, cluster, u.Run.JobID, u.Run.Submit, u.Period.String(), string(u.Tier), u.Type,
					mr.Run.Account, mr.Run.User, u.Count, u.Start, u.End, u.GPUSeconds, u.Booking)
				n++
				st.Accruals++
				if n == rowsPerInsert {
					if err := flush(); err != nil {
						return err
					}
				}
			}
		}
		if err := flush(); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO usage_accrual_state (cluster, as_of) VALUES (?, ?) ON DUPLICATE KEY UPDATE as_of = VALUES(as_of)", cluster, asOf); err != nil {
			return fmt.Errorf("record accrual time: %w", err)
		}
		return nil
	})
	return st, err
}

// AccrualRuns: see the method list in store.go.
func (d *DB) AccrualRuns(ctx context.Context, cluster string) ([]meter.RunKey, error) {
	var rows []struct {
		JobID  uint32 `db:"job_id"`
		Submit int64  `db:"submit_time"`
	}
	if err := d.db.SelectContext(ctx, &rows, "SELECT DISTINCT job_id, submit_time FROM usage_accrual WHERE cluster = ? ORDER BY job_id, submit_time", cluster); err != nil {
		return nil, fmt.Errorf("read the runs of the accruals: %w", err)
	}
	out := make([]meter.RunKey, len(rows))
	for i, r := range rows {
		out[i] = meter.RunKey{Cluster: cluster, JobID: r.JobID, Submit: r.Submit}
	}
	return out, nil
}
