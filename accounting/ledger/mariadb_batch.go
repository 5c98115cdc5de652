package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/interval"
)

// runBufs holds applyBatch's arrays of runs for reuse.
var runBufs = sync.Pool{New: func() any { return new([]meter.MeasuredRun) }}

// maxIDGap is how far apart two job ids of a batch may be and still be
// read with one range scan of the ledger's primary key (the ids between
// them cost a few rows each; a separate lookup costs a B-tree descent).
const maxIDGap = 32

// maxTerms bounds the ranges and ids of one lookup query.
const maxTerms = 4000

// loadExisting reads, in bulk, every line the ledger holds for runs: the
// batch's job ids, sorted, become ranges of the primary key (ids at most
// maxIDGap apart) and single ids, read in one query per maxTerms, streamed
// and folded per run. A month re-read thus costs about one scan of the
// month's lines, not one lookup per run.
func loadExisting(ctx context.Context, tx q, cluster string, runs []meter.MeasuredRun) (runKeys, error) {
	want := make(map[meter.RunKey]struct{}, len(runs))
	ids := make([]uint32, 0, len(runs))
	for _, r := range runs {
		if _, ok := want[r.Run.Key]; !ok {
			want[r.Run.Key] = struct{}{}
			ids = append(ids, r.Run.Key.JobID)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	out := runKeys{}
	pc := periodCache{}
	intern := internTable{}.get
	for len(ids) > 0 {
		var l idLookup
		l, ids = nextIDLookup(ids, maxTerms)
		query := "SELECT job_id, submit_time, usage_period, tier, gpu_type, revision, usage_start, gpu_seconds, booking FROM usage_ledger WHERE cluster = ? AND " + l.where
		if err := scanExisting(ctx, tx, query, append([]any{cluster}, l.args...), cluster, want, out, pc, intern); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// idLookup is one query's condition on job_id: where is a parenthesised
// disjunction of "job_id BETWEEN ? AND ?" ranges and one "job_id IN
// (?,...)" list, never empty, and args are its placeholders' values.
type idLookup struct {
	where string
	args  []any
}

// nextIDLookup takes, from the front of ids (sorted, distinct, not empty),
// at most limit terms: each run of ids at most maxIDGap apart is one range,
// every other id goes to the IN list (one term each). It returns the lookup
// and the ids left. The terms are collected first and joined once, so the
// text is valid whatever order ranges and singles come in.
func nextIDLookup(ids []uint32, limit int) (idLookup, []uint32) {
	var terms []string
	var args, singles []any
	for n := 0; len(ids) > 0 && n < limit; n++ {
		j := 1
		for j < len(ids) && ids[j]-ids[j-1] <= maxIDGap {
			j++
		}
		if j == 1 {
			singles = append(singles, ids[0])
		} else {
			terms = append(terms, "job_id BETWEEN ? AND ?")
			args = append(args, ids[0], ids[j-1])
		}
		ids = ids[j:]
	}
	if len(singles) > 0 {
		terms = append(terms, "job_id IN ("+strings.TrimSuffix(strings.Repeat("?,", len(singles)), ",")+")")
		args = append(args, singles...)
	}
	return idLookup{where: "(" + strings.Join(terms, " OR ") + ")", args: args}, ids
}

func scanExisting(ctx context.Context, tx q, query string, args []any, cluster string, want map[meter.RunKey]struct{}, out runKeys, pc periodCache, intern func([]byte) string) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("read existing ledger lines: %w", err)
	}
	defer rows.Close()
	var jobID, submit, period, tier, typ, rev, start, sec, booking sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&jobID, &submit, &period, &tier, &typ, &rev, &start, &sec, &booking); err != nil {
			return fmt.Errorf("read existing ledger line: %w", err)
		}
		id, e1 := strconv.ParseUint(string(jobID), 10, 32)
		sub, e2 := strconv.ParseInt(string(submit), 10, 64)
		rk := meter.RunKey{Cluster: cluster, JobID: uint32(id), Submit: sub}
		if _, ok := want[rk]; !ok {
			continue // another run in the range
		}
		r, e3 := strconv.Atoi(string(rev))
		st, e4 := strconv.ParseInt(string(start), 10, 64)
		n, e5 := strconv.ParseInt(string(sec), 10, 64)
		p, e6 := pc.parse(period)
		bk, e7 := strconv.ParseInt(string(booking), 10, 64)
		if err := errors.Join(e1, e2, e3, e4, e5, e6, e7); err != nil {
			return fmt.Errorf("read existing ledger line: %w", err)
		}
		out.addLine(rk, p, meter.Tier(intern(tier)), intern(typ), n, r, st, bk)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read existing ledger lines: %w", err)
	}
	return nil
}

func isDuplicate(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1062
}

// ApplyBatch: see the method list in store.go. Runs that cannot have lines yet (their end
// time lies outside the coverage and they did not cross a period end while
// running) are inserted without a lookup; if that ever meets an existing key
// the batch is retried with every run compared.
func (d *DB) ApplyBatch(ctx context.Context, cluster string, asOf int64, b meter.Batch) (meter.WriteStats, error) {
	st, err := d.applyBatch(ctx, cluster, asOf, b, b.CheckAll)
	if isDuplicate(err) && !b.CheckAll {
		d.log.Warn("ledger key already present for a run outside the coverage; comparing every run of the batch", "cluster", cluster, "err", err)
		st, err = d.applyBatch(ctx, cluster, asOf, b, true)
	}
	return st, err
}

func (d *DB) applyBatch(ctx context.Context, cluster string, asOf int64, b meter.Batch, checkAll bool) (meter.WriteStats, error) {
	var st meter.WriteStats
	err := d.withWrite(ctx, cluster, func(tx *sqlx.Tx) error {
		st = meter.WriteStats{Runs: len(b.Runs)}
		closed, err := loadClosed(ctx, tx, cluster)
		if err != nil {
			return err
		}
		var cov, touched interval.Set
		if !b.CheckAll {
			if cov, err = loadCoverage(ctx, tx, cluster, true); err != nil {
				return err
			}
			if touched, err = loadRanges(ctx, tx, "ingest_touched", cluster, true); err != nil {
				return err
			}
		}
		// One array for both: direct runs from the front, checked ones
		// from the back (then put back in their order).
		rp := runBufs.Get().(*[]meter.MeasuredRun)
		parts := slices.Grow((*rp)[:0], len(b.Runs))[:len(b.Runs)]
		defer func() { clear(parts); *rp = parts[:0]; runBufs.Put(rp) }()
		nd, nc := 0, len(parts)
		all := touched.Union(cov)
		for _, mr := range b.Runs {
			switch {
			case checkAll || needsLookup(mr.Run, all, b.Fresh, asOf):
				nc--
				parts[nc] = mr
			case len(mr.Usages) > 0:
				parts[nd] = mr
				nd++
			}
		}
		direct, checked := parts[:nd:nd], parts[nc:]
		slices.Reverse(checked)
		lines := planLines(direct, nil, closed)
		if len(checked) > 0 {
			st.Checked = len(checked)
			existing, err := loadExisting(ctx, tx, cluster, checked)
			if err != nil {
				return err
			}
			lines = append(lines, planLines(checked, existing, closed)...)
		}
		if err := d.writeLines(ctx, tx, cluster, asOf, lines, &st); err != nil {
			return err
		}
		if b.CheckAll {
			return nil
		}
		if !b.Touch.Empty() && !touched.Covers(b.Touch) {
			if err := saveRanges(ctx, tx, "ingest_touched", cluster, touched.Add(b.Touch)); err != nil {
				return err
			}
		}
		if covered := (interval.Interval{Start: b.From, End: b.Covered()}); !covered.Empty() && !cov.Covers(covered) {
			if err := saveCoverage(ctx, tx, cluster, cov.Add(covered)); err != nil {
				return err
			}
		}
		return advanceWatermark(ctx, tx, cluster, b, asOf)
	})
	return st, err
}

type watermarkRow struct {
	Source  string `db:"source"`
	Through int64  `db:"through"`
	After   uint64 `db:"after_inx"`
}

func advanceWatermark(ctx context.Context, tx q, cluster string, b meter.Batch, now int64) error {
	if b.Source == "" || b.Through <= b.From && b.After == 0 {
		return nil // no progress (an unordered window's intermediate batch)
	}
	var w watermarkRow
	err := tx.GetContext(ctx, &w, "SELECT source, through, after_inx FROM ingest_watermark WHERE cluster = ? AND source = ? FOR UPDATE", cluster, b.Source)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, err = tx.ExecContext(ctx, "INSERT INTO ingest_watermark (cluster, source, through, after_inx, updated_at) VALUES (?, ?, ?, ?, ?)",
			cluster, b.Source, b.Through, b.After, now)
	case err != nil:
	case b.From > w.Through:
		return nil // a window after a gap does not move the watermark
	case b.Through > w.Through || b.Through == w.Through && b.After > w.After:
		_, err = tx.ExecContext(ctx, "UPDATE ingest_watermark SET through = ?, after_inx = ?, updated_at = ? WHERE cluster = ? AND source = ?",
			b.Through, b.After, now, cluster, b.Source)
	}
	if err != nil {
		return fmt.Errorf("advance watermark of %s/%s: %w", cluster, b.Source, err)
	}
	return nil
}

// Watermark: see the method list in store.go.
func (d *DB) Watermark(ctx context.Context, cluster, source string) (meter.Watermark, bool, error) {
	var w watermarkRow
	err := d.db.GetContext(ctx, &w, "SELECT source, through, after_inx FROM ingest_watermark WHERE cluster = ? AND source = ?", cluster, source)
	if errors.Is(err, sql.ErrNoRows) {
		return meter.Watermark{}, false, nil
	}
	if err != nil {
		return meter.Watermark{}, false, fmt.Errorf("read watermark of %s/%s: %w", cluster, source, err)
	}
	return meter.Watermark{Source: w.Source, Through: w.Through, After: w.After}, true, nil
}
