package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/interval"
)

func loadCoverage(ctx context.Context, tx q, cluster string, lock bool) (interval.Set, error) {
	return loadRanges(ctx, tx, "ingest_coverage", cluster, lock)
}

func saveCoverage(ctx context.Context, tx q, cluster string, c interval.Set) error {
	return saveRanges(ctx, tx, "ingest_coverage", cluster, c)
}

// loadRanges reads a range set (ingest_coverage, ingest_touched).
func loadRanges(ctx context.Context, tx q, table, cluster string, lock bool) (interval.Set, error) {
	query := "SELECT from_time, to_time FROM " + table + " WHERE cluster = ? ORDER BY from_time"
	if lock {
		query += " FOR UPDATE"
	}
	rows, err := tx.QueryxContext(ctx, query, cluster)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	defer rows.Close()
	var c interval.Set
	for rows.Next() {
		var r interval.Interval
		if err := rows.Scan(&r.Start, &r.End); err != nil {
			return nil, err
		}
		c = append(c, r)
	}
	return c, rows.Err()
}

// saveRanges replaces a range set.
func saveRanges(ctx context.Context, tx q, table, cluster string, c interval.Set) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM "+table+" WHERE cluster = ?", cluster); err != nil {
		return fmt.Errorf("write %s: %w", table, err)
	}
	for _, r := range c {
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+table+" (cluster, from_time, to_time) VALUES (?, ?, ?)", cluster, r.Start, r.End); err != nil {
			return fmt.Errorf("write %s: %w", table, err)
		}
	}
	return nil
}

// State: see the method list in store.go.
func (d *DB) State(ctx context.Context, cluster string) (State, error) {
	s := State{Watermarks: map[string]meter.Watermark{}}
	var ws []watermarkRow
	if err := d.db.SelectContext(ctx, &ws, "SELECT source, through, after_inx FROM ingest_watermark WHERE cluster = ?", cluster); err != nil {
		return s, fmt.Errorf("read watermarks: %w", err)
	}
	for _, w := range ws {
		s.Watermarks[w.Source] = meter.Watermark{Source: w.Source, Through: w.Through, After: w.After}
	}
	var asOf []int64
	if err := d.db.SelectContext(ctx, &asOf, "SELECT as_of FROM usage_accrual_state WHERE cluster = ?", cluster); err != nil {
		return s, fmt.Errorf("read accrual time: %w", err)
	}
	if len(asOf) > 0 {
		s.AccrualsAsOf = asOf[0]
	}
	cov, err := loadCoverage(ctx, d.db, cluster, false)
	if err != nil {
		return s, err
	}
	s.Coverage = rangePairs(cov)
	closed, err := loadClosed(ctx, d.db, cluster)
	if err != nil {
		return s, err
	}
	s.Closed = closed
	var ps []passRow
	if err := d.db.SelectContext(ctx, &ps, "SELECT "+passCols+" FROM ingest_pass WHERE cluster = ?", cluster); err != nil {
		return s, fmt.Errorf("read ingest passes: %w", err)
	}
	for _, p := range ps {
		s.Passes = append(s.Passes, p.pass())
	}
	s.Passes = sortedPasses(s.Passes)
	return s, nil
}

// Coverage: see the method list in store.go.
func (d *DB) Coverage(ctx context.Context, cluster string) (interval.Set, error) {
	return loadCoverage(ctx, d.db, cluster, false)
}

// Touched: see the method list in store.go.
func (d *DB) Touched(ctx context.Context, cluster string) (interval.Set, error) {
	cov, err := loadCoverage(ctx, d.db, cluster, false)
	if err != nil {
		return nil, err
	}
	t, err := loadRanges(ctx, d.db, "ingest_touched", cluster, false)
	return t.Union(cov), err
}

const passCols = "source, kind, as_of, from_time, finished_at, runs, line_count, corrections"

type passRow struct {
	Source      string `db:"source"`
	Kind        string `db:"kind"`
	AsOf        int64  `db:"as_of"`
	From        int64  `db:"from_time"`
	Finished    int64  `db:"finished_at"`
	Runs        int    `db:"runs"`
	Lines       int    `db:"line_count"`
	Corrections int    `db:"corrections"`
}

func (r passRow) pass() meter.Pass {
	return meter.Pass{Kind: r.Kind, Source: r.Source, AsOf: r.AsOf, From: r.From, Finished: r.Finished, Runs: r.Runs, Lines: r.Lines, Corrections: r.Corrections}
}

// Pass: see the method list in store.go.
func (d *DB) Pass(ctx context.Context, cluster, source, kind string) (meter.Pass, bool, error) {
	var r passRow
	err := d.db.GetContext(ctx, &r, "SELECT "+passCols+" FROM ingest_pass WHERE cluster = ? AND source = ? AND kind = ?", cluster, source, kind)
	if errors.Is(err, sql.ErrNoRows) {
		return meter.Pass{}, false, nil
	}
	if err != nil {
		return meter.Pass{}, false, fmt.Errorf("read the last %s pass of %s/%s: %w", kind, cluster, source, err)
	}
	return r.pass(), true, nil
}

// RecordPass: see the method list in store.go.
func (d *DB) RecordPass(ctx context.Context, cluster string, p meter.Pass) error {
	return d.withWrite(ctx, cluster, func(tx *sqlx.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO ingest_pass (cluster, `+passCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON DUPLICATE KEY UPDATE as_of = VALUES(as_of), from_time = VALUES(from_time), finished_at = VALUES(finished_at),
			runs = VALUES(runs), line_count = VALUES(line_count), corrections = VALUES(corrections)`,
			cluster, p.Source, p.Kind, p.AsOf, p.From, p.Finished, p.Runs, p.Lines, p.Corrections)
		if err != nil {
			return fmt.Errorf("record the %s pass of %s/%s: %w", p.Kind, cluster, p.Source, err)
		}
		return nil
	})
}
