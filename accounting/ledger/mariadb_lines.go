package ledger

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

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
