package ledger

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"strconv"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

// The exports' reads of the ledger lines (accounting/export prices every
// line of a period, a million rows' month holds ~400k): Lines' lines, read
// faster. The query is sent as text (no prepared statement: the cluster,
// period and account are SQL literals, appendStr), the numbers come as
// one comma-separated text column and the names as raw bytes, so a row
// costs no conversion through database/sql and no allocation but a new
// name's first string.

// SummaryLines streams the lines booked in q.Booked (of q.Account when
// set) in any order, with only the fields a priced summary reads: Account,
// Type, Tier, Period, Booked, Final, Start and GPUSeconds, and Booking
// (Run, User, Count, End and Revision are zero). q.Ordered is ignored.
func (d *DB) SummaryLines(ctx context.Context, cluster string, q LineQuery, fn func(meter.Line) error) error {
	return d.exportLines(ctx, cluster, q, false, fn)
}

// ExportLines streams the lines booked in q.Booked as Lines does (every
// field; in the export order when q.Ordered).
func (d *DB) ExportLines(ctx context.Context, cluster string, q LineQuery, fn func(meter.Line) error) error {
	return d.exportLines(ctx, cluster, q, true, fn)
}

func (d *DB) exportLines(ctx context.Context, cluster string, lq LineQuery, full bool, fn func(meter.Line) error) error {
	qb := []byte("SELECT account, gpu_type, tier, usage_period, CONCAT_WS(',', usage_start, gpu_seconds, booking")
	if full {
		qb = append(qb, ", job_id, submit_time, revision, gpu_count, usage_end), user_name"...)
	} else {
		qb = append(qb, ')')
	}
	qb = append(qb, " FROM usage_ledger WHERE cluster = "...)
	qb = appendStr(qb, cluster)
	qb = append(qb, " AND booked_period = '"...)
	qb = appendPeriod(qb, lq.Booked)
	qb = append(qb, '\'')
	if lq.Account != "" {
		qb = append(qb, " AND account = "...)
		qb = appendStr(qb, lq.Account)
	}
	if full && lq.Ordered {
		qb = append(qb, " ORDER BY job_id, submit_time, usage_period, tier, gpu_type, revision"...)
	}
	rows, err := d.db.QueryContext(ctx, string(qb))
	if err != nil {
		return fmt.Errorf("read ledger lines of %s: %w", lq.Booked, err)
	}
	defer rows.Close()
	var (
		account, typ, tier, period, nums, user sql.RawBytes
		dest                                   = []any{&account, &typ, &tier, &period, &nums}
		n                                      [8]int64
		l                                      meter.Line
	)
	if full {
		dest = append(dest, &user)
	}
	want := 3
	if full {
		want = 8
	}
	pc := periodCache{}
	names := internTable{}
	tiers := map[string]meter.Tier{}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("read ledger line: %w", err)
		}
		if k, err := parseInts(nums, n[:want]); err != nil || k != want {
			return fmt.Errorf("read ledger line: numbers %q: want %d integers", nums, want)
		}
		l = meter.Line{Booked: lq.Booked}
		l.Run.Cluster, l.Final = cluster, true
		l.Start, l.GPUSeconds, l.Booking = n[0], n[1], n[2]
		if full {
			if n[3] < 0 || n[3] > 1<<32-1 || n[5] < 0 || n[5] > 1<<16-1 {
				return fmt.Errorf("read ledger line: job id %d, revision %d out of range", n[3], n[5])
			}
			l.Run.JobID, l.Run.Submit, l.Revision, l.Count, l.End = uint32(n[3]), n[4], int(n[5]), n[6], n[7]
			l.User = names.get(user)
		}
		if l.Period, err = pc.parse(period); err != nil {
			return err
		}
		t, ok := tiers[string(tier)]
		if !ok {
			t = meter.Tier(tier)
			tiers[string(tier)] = t
		}
		l.Tier, l.Type, l.Account = t, names.get(typ), names.get(account)
		if err := fn(l); err != nil {
			return err
		}
	}
	return rows.Err()
}

// internTable hands out one string per distinct name (bounded: a table
// of 100k names stops growing, later names are copied each time).
type internTable map[string]string

func (t internTable) get(b []byte) string {
	if s, ok := t[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(t) < 100000 {
		t[s] = s
	}
	return s
}

// parseInts reads comma-separated decimal integers into out and returns
// how many it read; more than len(out), or anything but -?[0-9]+ between
// the commas, is an error.
func parseInts(b []byte, out []int64) (int, error) {
	k := 0
	for len(b) > 0 {
		if k == len(out) {
			return k, strconv.ErrRange
		}
		f := b
		if i := bytes.IndexByte(b, ','); i >= 0 {
			f, b = b[:i], b[i+1:]
			if len(b) == 0 {
				return k, strconv.ErrSyntax
			}
		} else {
			b = nil
		}
		v, err := parseInt(f)
		if err != nil {
			return k, err
		}
		out[k] = v
		k++
	}
	return k, nil
}

// parseInt reads -?[0-9]+ that fits an int64.
func parseInt(b []byte) (int64, error) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		if len(b) > 19 {
			return 0, strconv.ErrRange
		}
		return 0, strconv.ErrSyntax
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, strconv.ErrSyntax
		}
		u = u*10 + uint64(c-'0')
	}
	switch {
	case !neg && u > 1<<63-1, neg && u > 1<<63:
		return 0, strconv.ErrRange
	case neg:
		return -int64(u), nil
	}
	return int64(u), nil
}

// SummaryLines: see DB.SummaryLines (Memory returns every field).
func (m *Memory) SummaryLines(ctx context.Context, cluster string, q LineQuery, fn func(meter.Line) error) error {
	return m.Lines(ctx, cluster, q, fn)
}

// ExportLines: see DB.ExportLines.
func (m *Memory) ExportLines(ctx context.Context, cluster string, q LineQuery, fn func(meter.Line) error) error {
	return m.Lines(ctx, cluster, q, fn)
}
