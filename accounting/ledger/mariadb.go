package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/money"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// DB is the MariaDB ledger, on gpubridge's own database (migrations
// 00200-00299 of internal/sqldb).
//
// Lines are written with LOAD DATA LOCAL INFILE from memory (the driver's
// registered readers), the fastest way into InnoDB; a batch holding a name
// LOAD DATA would have to escape, or a server that refuses LOCAL INFILE,
// gets multi-row INSERTs instead. While this DB holds a cluster's ledger
// lock, every write of that cluster runs on the lock's own connection: if
// that connection breaks, the server drops the lock and the write fails
// with ErrLockLost, so nothing is ever written without the lock.
type DB struct {
	db  *sqlx.DB
	log *slog.Logger

	mu    sync.Mutex
	locks map[string]*heldLock // by cluster
	// insertOnly: LOAD DATA LOCAL INFILE was refused (or is off): lines
	// go in multi-row INSERTs.
	insertOnly atomic.Bool
}

// heldLock is a cluster's ledger lock and the connection that holds it.
type heldLock struct {
	mu   sync.Mutex // one write transaction at a time on conn
	conn *sqlx.Conn
	name string
}

// NewDB returns the store on db (opened with sqldb.OpenMigrated).
func NewDB(db *sqlx.DB, log *slog.Logger) *DB {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &DB{db: db, log: log.With("component", "ledger"), locks: map[string]*heldLock{}}
}

// UseInserts makes the store write lines with multi-row INSERTs instead of
// LOAD DATA LOCAL INFILE (for servers with local_infile off, and tests).
func (d *DB) UseInserts(on bool) { d.insertOnly.Store(on) }

// q is what both *sqlx.DB and *sqlx.Tx offer.
type q interface {
	sqlx.ExtContext
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
	GetContext(ctx context.Context, dest any, query string, args ...any) error
}

const lineCols = "cluster, job_id, submit_time, usage_period, tier, gpu_type, revision, booked_period, account, user_name, gpu_count, usage_start, usage_end, gpu_seconds, written_at, booking"

const accrualCols = "cluster, job_id, submit_time, usage_period, tier, gpu_type, account, user_name, gpu_count, usage_start, usage_end, gpu_seconds, booking"

// rowsPerInsert bounds one multi-row INSERT (placeholders stay < 65535).
const rowsPerInsert = 2000

var insertSQL sync.Map // "table/n" -> query

func multiInsert(table, cols string, ncols, n int) string {
	key := fmt.Sprintf("%s/%d", table, n)
	if v, ok := insertSQL.Load(key); ok {
		return v.(string)
	}
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", ncols), ",") + ")"
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (" + cols + ") VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(row)
	}
	s := b.String()
	insertSQL.Store(key, s)
	return s
}

// loadBufs holds the text buffers of LOAD DATA for reuse (a batch's is a
// megabyte or so).
var loadBufs = sync.Pool{New: func() any { return new([]byte) }}

// runBufs holds applyBatch's arrays of runs for reuse.
var runBufs = sync.Pool{New: func() any { return new([]meter.MeasuredRun) }}

// loadSeq names the readers LOAD DATA reads from.
var loadSeq atomic.Uint64

// writeLines inserts lines, with LOAD DATA LOCAL INFILE when every string
// of the batch is plain (no tab, newline, backslash or NUL: nothing to
// escape, whatever the server's escaping rules) and the server allows it,
// else with multi-row INSERTs. The server refusing LOCAL INFILE switches
// the store to INSERTs for good (logged once).
func (d *DB) writeLines(ctx context.Context, tx q, cluster string, writtenAt int64, lines []meter.Line, st *meter.WriteStats) error {
	if len(lines) == 0 {
		return nil
	}
	if !d.insertOnly.Load() && plainLines(cluster, lines) {
		err := loadLines(ctx, tx, cluster, writtenAt, lines)
		if err == nil {
			for _, l := range lines {
				countLine(l, st)
			}
			return nil
		}
		if !localInfileRefused(err) {
			return err
		}
		d.insertOnly.Store(true)
		d.log.Warn("the server refuses LOAD DATA LOCAL INFILE (local_infile=OFF?); writing the ledger with multi-row INSERTs, which is slower", "err", err)
	}
	return insertLines(ctx, tx, cluster, writtenAt, lines, st)
}

// localInfileRefused: error 1148 (command not allowed) or 3948/4166
// (loading local data is disabled).
func localInfileRefused(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1148 || me.Number == 3948 || me.Number == 4166) ||
		strings.Contains(err.Error(), "local file") && strings.Contains(err.Error(), "not allowed")
}

// plain reports whether s needs no escaping in LOAD DATA's default format.
func plain(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r == '\t' || r == '\n' || r == '\r' || r == '\\' || r == 0 }) < 0
}

// plainLines reports whether LOAD DATA can take lines as they are: no
// string to escape, none longer than its column (the INSERTs report that
// as an error).
func plainLines(cluster string, lines []meter.Line) bool {
	fits := func(s string, n int) bool { return len(s) <= n || utf8.RuneCountInString(s) <= n }
	if !plain(cluster) || !fits(cluster, 64) {
		return false
	}
	for _, l := range lines {
		if !plain(l.Account) || !plain(l.User) || !plain(l.Type) || !plain(string(l.Tier)) ||
			!fits(l.Account, 64) || !fits(l.User, 64) || !fits(l.Type, 64) || !fits(string(l.Tier), 16) {
			return false
		}
	}
	return true
}

// loadLines writes lines with one LOAD DATA LOCAL INFILE of tab-separated
// text built in memory, and checks that the server took every line.
func loadLines(ctx context.Context, tx q, cluster string, writtenAt int64, lines []meter.Line) error {
	bp := loadBufs.Get().(*[]byte)
	buf := slices.Grow((*bp)[:0], 112*len(lines))
	defer func() { *bp = buf[:0]; loadBufs.Put(bp) }() // the driver has read it all when Exec returns
	var num [20]byte
	for _, l := range lines {
		buf = append(buf, cluster...)
		buf = append(buf, '\t')
		buf = strconv.AppendUint(buf, uint64(l.Run.JobID), 10)
		buf = append(buf, '\t')
		buf = strconv.AppendInt(buf, l.Run.Submit, 10)
		buf = append(buf, '\t')
		buf = appendPeriod(buf, l.Period)
		buf = append(buf, '\t')
		buf = append(buf, l.Tier...)
		buf = append(buf, '\t')
		buf = append(buf, l.Type...)
		buf = append(buf, '\t')
		buf = strconv.AppendInt(buf, int64(l.Revision), 10)
		buf = append(buf, '\t')
		buf = appendPeriod(buf, l.Booked)
		buf = append(buf, '\t')
		buf = append(buf, l.Account...)
		buf = append(buf, '\t')
		buf = append(buf, l.User...)
		for _, v := range [...]int64{l.Count, l.Start, l.End, l.GPUSeconds, writtenAt, l.Booking} {
			buf = append(buf, '\t')
			buf = append(buf, strconv.AppendInt(num[:0], v, 10)...)
		}
		buf = append(buf, '\n')
	}
	name := "gpubridge-ledger-" + strconv.FormatUint(loadSeq.Add(1), 10)
	mysql.RegisterReaderHandler(name, func() io.Reader { return bytes.NewReader(buf) })
	defer mysql.DeregisterReaderHandler(name)
	// The defaults of LOAD DATA are tab-separated fields and newline-ended
	// lines; nothing in buf needs escaping (plainLines).
	res, err := tx.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' INTO TABLE usage_ledger CHARACTER SET utf8mb4 ("+lineCols+")")
	if err != nil {
		return fmt.Errorf("load %d ledger lines: %w", len(lines), err)
	}
	// With LOCAL the server cannot stop the client's stream, so it skips a
	// duplicate key and turns a bad value into a warning instead of
	// failing: any warning fails the batch (rolled back), a duplicate as
	// the error an INSERT would have given.
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("load %d ledger lines: %w", len(lines), err)
	}
	var warnings int
	if err := tx.QueryRowxContext(ctx, "SELECT @@warning_count").Scan(&warnings); err != nil {
		return fmt.Errorf("load %d ledger lines: read warnings: %w", len(lines), err)
	}
	if n == int64(len(lines)) && warnings == 0 {
		return nil
	}
	var w struct {
		Level   string `db:"Level"`
		Code    uint16 `db:"Code"`
		Message string `db:"Message"`
	}
	if err := tx.QueryRowxContext(ctx, "SHOW WARNINGS LIMIT 1").Scan(&w.Level, &w.Code, &w.Message); err != nil {
		return fmt.Errorf("load %d ledger lines: the server took %d with %d warnings", len(lines), n, warnings)
	}
	return fmt.Errorf("load %d ledger lines: the server took %d: %w", len(lines), n, &mysql.MySQLError{Number: w.Code, Message: w.Message})
}

// insertLines writes lines in multi-row INSERTs of literal values (the text
// protocol: no prepare round trip, no per-argument conversion). Strings are
// written as plain quoted literals when they hold only safe characters and
// as hex literals otherwise, so no escaping rule or SQL mode matters.
func insertLines(ctx context.Context, tx q, cluster string, writtenAt int64, lines []meter.Line, st *meter.WriteStats) error {
	const head = "INSERT INTO usage_ledger (" + lineCols + ") VALUES "
	buf := make([]byte, 0, 256*min(len(lines), rowsPerInsert)+len(head))
	var pc [2][]byte
	for len(lines) > 0 {
		n := min(len(lines), rowsPerInsert)
		b := append(buf[:0], head...)
		for i, l := range lines[:n] {
			if i > 0 {
				b = append(b, ',')
			}
			pc[0], pc[1] = appendPeriod(pc[0][:0], l.Period), appendPeriod(pc[1][:0], l.Booked)
			b = append(b, '(')
			b = appendStr(b, cluster)
			b = append(b, ',')
			b = strconv.AppendUint(b, uint64(l.Run.JobID), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, l.Run.Submit, 10)
			b = append(b, ",'"...)
			b = append(b, pc[0]...)
			b = append(b, "',"...)
			b = appendStr(b, string(l.Tier))
			b = append(b, ',')
			b = appendStr(b, l.Type)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(l.Revision), 10)
			b = append(b, ",'"...)
			b = append(b, pc[1]...)
			b = append(b, "',"...)
			b = appendStr(b, l.Account)
			b = append(b, ',')
			b = appendStr(b, l.User)
			for _, v := range [...]int64{l.Count, l.Start, l.End, l.GPUSeconds, writtenAt, l.Booking} {
				b = append(b, ',')
				b = strconv.AppendInt(b, v, 10)
			}
			b = append(b, ')')
			countLine(l, st)
		}
		buf = b
		if _, err := tx.ExecContext(ctx, string(b)); err != nil {
			return fmt.Errorf("insert %d ledger lines: %w", n, err)
		}
		lines = lines[n:]
	}
	return nil
}

// appendPeriod writes "YYYY-MM".
func appendPeriod(b []byte, p meter.Period) []byte {
	y, m := p.Year(), int(p.Month())
	return append(b, byte('0'+y/1000%10), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-', byte('0'+m/10), byte('0'+m%10))
}

// appendStr writes s as an SQL string literal: 'abc' when every byte is a
// letter, digit or one of . _ - : @ + and space, else X'616263'.
func appendStr(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-:@+ ", c) >= 0) {
			b = append(b, "X'"...)
			b = hex.AppendEncode(b, []byte(s))
			return append(b, '\'')
		}
	}
	b = append(b, '\'')
	b = append(b, s...)
	return append(b, '\'')
}

func loadClosed(ctx context.Context, tx q, cluster string) (booker, error) {
	var ps []string
	if err := tx.SelectContext(ctx, &ps, "SELECT period FROM ledger_period WHERE cluster = ?", cluster); err != nil {
		return nil, fmt.Errorf("read closed periods: %w", err)
	}
	b := booker{}
	for _, s := range ps {
		p, err := meter.ParsePeriod(s)
		if err != nil {
			return nil, err
		}
		b[p] = true
	}
	return b, nil
}

func loadCoverage(ctx context.Context, tx q, cluster string, lock bool) (coverage, error) {
	return loadRanges(ctx, tx, "ingest_coverage", cluster, lock)
}

func saveCoverage(ctx context.Context, tx q, cluster string, c coverage) error {
	return saveRanges(ctx, tx, "ingest_coverage", cluster, c)
}

// loadRanges reads a range set (ingest_coverage, ingest_touched).
func loadRanges(ctx context.Context, tx q, table, cluster string, lock bool) (coverage, error) {
	query := "SELECT from_time, to_time FROM " + table + " WHERE cluster = ? ORDER BY from_time"
	if lock {
		query += " FOR UPDATE"
	}
	rows, err := tx.QueryxContext(ctx, query, cluster)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	defer rows.Close()
	var c coverage
	for rows.Next() {
		var r [2]int64
		if err := rows.Scan(&r[0], &r[1]); err != nil {
			return nil, err
		}
		c = append(c, r)
	}
	return c, rows.Err()
}

func saveRanges(ctx context.Context, tx q, table, cluster string, c coverage) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM "+table+" WHERE cluster = ?", cluster); err != nil {
		return fmt.Errorf("write %s: %w", table, err)
	}
	for _, r := range c {
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+table+" (cluster, from_time, to_time) VALUES (?, ?, ?)", cluster, r[0], r[1]); err != nil {
			return fmt.Errorf("write %s: %w", table, err)
		}
	}
	return nil
}

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
		var cov, touched coverage
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
		all := touched.merge(cov)
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
		if b.Touch[1] > b.Touch[0] && !touched.covers(b.Touch[0], b.Touch[1]) {
			if err := saveRanges(ctx, tx, "ingest_touched", cluster, touched.add(b.Touch[0], b.Touch[1])); err != nil {
				return err
			}
		}
		if b.Covered() > b.From && !cov.covers(b.From, b.Covered()) {
			if err := saveCoverage(ctx, tx, cluster, cov.add(b.From, b.Covered())); err != nil {
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
	s.Coverage = cov
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
func (d *DB) Coverage(ctx context.Context, cluster string) ([][2]int64, error) {
	return loadCoverage(ctx, d.db, cluster, false)
}

// Touched: see the method list in store.go.
func (d *DB) Touched(ctx context.Context, cluster string) ([][2]int64, error) {
	cov, err := loadCoverage(ctx, d.db, cluster, false)
	if err != nil {
		return nil, err
	}
	t, err := loadRanges(ctx, d.db, "ingest_touched", cluster, false)
	return t.merge(cov), err
}

// ClosedPeriods: see the method list in store.go.
func (d *DB) ClosedPeriods(ctx context.Context, cluster string) ([]meter.Period, error) {
	b, err := loadClosed(ctx, d.db, cluster)
	return b.periods(), err
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

// Audit writes one row of gpubridge's audit log about cluster's ledger
// (an operator's decision, such as accepting a gap of purged job rows).
func (d *DB) Audit(ctx context.Context, cluster string, at time.Time, actor, action, object string, details any) error {
	return d.withWrite(ctx, cluster, func(tx *sqlx.Tx) error {
		return sqldb.Audit(ctx, tx, at, actor, action, "ledger", object, nil, details)
	})
}

// Lines: see the method list in store.go.
func (d *DB) Lines(ctx context.Context, cluster string, lq LineQuery, fn func(meter.Line) error) error {
	query := "SELECT job_id, submit_time, usage_period, tier, gpu_type, revision, booked_period, account, user_name, gpu_count, usage_start, usage_end, gpu_seconds, booking FROM usage_ledger WHERE cluster = ? AND booked_period = ?"
	return d.stream(ctx, cluster, query, true, lq, fn)
}

// Accruals: see the method list in store.go.
func (d *DB) Accruals(ctx context.Context, cluster string, lq LineQuery, fn func(meter.Line) error) error {
	query := "SELECT job_id, submit_time, usage_period, tier, gpu_type, 0 AS revision, usage_period AS booked_period, account, user_name, gpu_count, usage_start, usage_end, gpu_seconds, booking FROM usage_accrual WHERE cluster = ? AND usage_period = ?"
	return d.stream(ctx, cluster, query, false, lq, fn)
}

// stream reads lines in constant memory (rows are scanned one at a time).
func (d *DB) stream(ctx context.Context, cluster, query string, final bool, lq LineQuery, fn func(meter.Line) error) error {
	args := []any{cluster, lq.Booked.String()}
	if lq.Account != "" {
		query += " AND account = ?"
		args = append(args, lq.Account)
	}
	if lq.Ordered {
		query += " ORDER BY job_id, submit_time, usage_period, tier, gpu_type, revision"
	}
	rows, err := d.db.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("read ledger lines of %s: %w", lq.Booked, err)
	}
	defer rows.Close()
	var (
		period, booked, tier, typ, account, user []byte
		jobID, rev                               int64
		l                                        meter.Line
	)
	pc := periodCache{}
	tiers := map[string]meter.Tier{}
	intern := internTable{}.get
	for rows.Next() {
		if err := rows.Scan(&jobID, &l.Run.Submit, &period, &tier, &typ, &rev, &booked, &account, &user,
			&l.Count, &l.Start, &l.End, &l.GPUSeconds, &l.Booking); err != nil {
			return fmt.Errorf("read ledger line: %w", err)
		}
		l.Run.Cluster, l.Run.JobID, l.Revision = cluster, uint32(jobID), int(rev)
		if l.Period, err = pc.parse(period); err != nil {
			return err
		}
		if l.Booked, err = pc.parse(booked); err != nil {
			return err
		}
		t, ok := tiers[string(tier)]
		if !ok {
			t = meter.Tier(tier)
			tiers[string(tier)] = t
		}
		l.Tier, l.Type, l.Account, l.User = t, intern(typ), intern(account), intern(user)
		l.Final = final
		if err := fn(l); err != nil {
			return err
		}
	}
	return rows.Err()
}

// periodCache parses the few distinct 'YYYY-MM' values of a stream once.
type periodCache map[string]meter.Period

func (c periodCache) parse(b []byte) (meter.Period, error) {
	if p, ok := c[string(b)]; ok {
		return p, nil
	}
	p, err := meter.ParsePeriod(string(b))
	if err != nil {
		return 0, err
	}
	c[string(b)] = p
	return p, nil
}

type periodRow struct {
	Cluster  string    `db:"cluster"`
	Period   string    `db:"period"`
	ClosedAt time.Time `db:"closed_at"`
	ClosedBy string    `db:"closed_by"`
	Lines    int64     `db:"line_count"`
	GPUSec   int64     `db:"gpu_seconds"`
	Amount   int64     `db:"amount_minor"`
	Currency string    `db:"currency"`
	Snapshot string    `db:"snapshot_json"`
}

// Period: see the method list in store.go.
func (d *DB) Period(ctx context.Context, cluster string, p meter.Period) (PeriodRecord, bool, error) {
	var r periodRow
	err := d.db.GetContext(ctx, &r, `SELECT cluster, period, closed_at, closed_by, line_count, gpu_seconds, amount_minor, currency, snapshot_json
		FROM ledger_period WHERE cluster = ? AND period = ?`, cluster, p.String())
	if errors.Is(err, sql.ErrNoRows) {
		return PeriodRecord{}, false, nil
	}
	if err != nil {
		return PeriodRecord{}, false, fmt.Errorf("read period %s: %w", p, err)
	}
	rec := PeriodRecord{Cluster: r.Cluster, Period: p, ClosedAt: r.ClosedAt.UTC(), ClosedBy: r.ClosedBy, Lines: r.Lines,
		GPUSeconds: r.GPUSec, Currency: r.Currency}
	if err := json.Unmarshal([]byte(r.Snapshot), &rec.Snapshot); err != nil {
		return rec, true, fmt.Errorf("period %s: snapshot: %w", p, err)
	}
	rec.Amount = money.New(r.Amount, rec.Snapshot.Card.Unit()) // amount_minor is in the card's minor unit
	return rec, true, nil
}

// MarkClosed: see the method list in store.go.
func (d *DB) MarkClosed(ctx context.Context, rec PeriodRecord) error {
	snap, err := json.Marshal(rec.Snapshot)
	if err != nil {
		return err
	}
	return d.withWrite(ctx, rec.Cluster, func(tx *sqlx.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO ledger_period (cluster, period, closed_at, closed_by, line_count, gpu_seconds, amount_minor, currency, snapshot_json)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, rec.Cluster, rec.Period.String(), rec.ClosedAt.UTC(), rec.ClosedBy, rec.Lines, rec.GPUSeconds, rec.Amount.Units(), rec.Currency, string(snap))
		if isDuplicate(err) {
			return fmt.Errorf("close %s: %w", rec.Period, ErrAlreadyClosed)
		}
		if err != nil {
			return fmt.Errorf("close %s: %w", rec.Period, err)
		}
		summary := map[string]any{"lines": rec.Lines, "gpuSeconds": rec.GPUSeconds, "amountMinor": rec.Amount.Units(), "amount": rec.Amount.String(), "currency": rec.Currency}
		return sqldb.Audit(ctx, tx, rec.ClosedAt, rec.ClosedBy, "close", "period", rec.Cluster+"/"+rec.Period.String(), nil, summary)
	})
}

// Lock implements Store with a MariaDB named lock held on a dedicated
// connection: if the process dies, the server drops the connection and the
// lock. Until release, this DB writes the cluster's ledger on that same
// connection (withWrite), so a reset of it cannot leave an ingest writing
// without the lock.
func (d *DB) Lock(ctx context.Context, cluster string, wait time.Duration) (func(), error) {
	name := lockName(cluster)
	conn, err := d.db.Connx(ctx)
	if err != nil {
		return nil, fmt.Errorf("ledger lock: %w", err)
	}
	var got sql.NullInt64
	if err := conn.QueryRowxContext(ctx, "SELECT GET_LOCK(?, ?)", name, int(wait.Seconds())).Scan(&got); err != nil {
		conn.Close()
		return nil, fmt.Errorf("ledger lock: %w", err)
	}
	if got.Int64 != 1 {
		conn.Close()
		return nil, fmt.Errorf("%w (cluster %s; waited %s)", ErrLocked, cluster, wait)
	}
	l := &heldLock{conn: conn, name: name}
	d.mu.Lock()
	d.locks[cluster] = l
	d.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			d.mu.Lock()
			if d.locks[cluster] == l {
				delete(d.locks, cluster)
			}
			d.mu.Unlock()
			l.mu.Lock()
			defer l.mu.Unlock()
			_, _ = conn.ExecContext(context.Background(), "DO RELEASE_LOCK(?)", name)
			conn.Close()
		})
	}, nil
}

func lockName(cluster string) string {
	name := "gpubridge.ledger." + cluster
	if len(name) > 64 {
		h := sha256.Sum256([]byte(cluster))
		name = "gpubridge.ledger." + hex.EncodeToString(h[:16])
	}
	return name
}

// withWrite runs fn in a transaction: on the lock's connection while this
// DB holds cluster's lock, else on the pool (writes without the lock:
// tests and tools). A failure on the lock's connection that leaves it
// unusable is ErrLockLost: the server dropped the lock with it.
func (d *DB) withWrite(ctx context.Context, cluster string, fn func(*sqlx.Tx) error) error {
	d.mu.Lock()
	l := d.locks[cluster]
	d.mu.Unlock()
	if l == nil {
		return sqldb.WithTx(ctx, d.db, fn)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	err := withConnTx(ctx, l.conn, fn)
	if err != nil {
		pctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if perr := l.conn.PingContext(pctx); perr != nil {
			return fmt.Errorf("%w: %v", ErrLockLost, err)
		}
	}
	return err
}

// withConnTx is sqldb.WithTx on one connection.
func withConnTx(ctx context.Context, conn *sqlx.Conn, fn func(*sqlx.Tx) error) (err error) {
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
	}()
	if err = fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
