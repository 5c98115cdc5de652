package ledger

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

// Booking charges: the ledger's second kind of line. A booking's charge in
// a usage period (meter.BookingCharges) is a line of booking_charge keyed
// (cluster, booking, usage period, GPU type, revision), insert-only like
// the usage lines: ApplyCharges compares each booking's charges as computed
// now with the sum of its keys' revisions and writes a revision holding
// the difference when they differ (the booking was changed or cancelled),
// reverses a key the booking no longer has to zero, and writes nothing
// when they agree, so a re-run adds nothing. A line whose usage period is
// closed is booked in the first open period after it. Charges streams the
// lines booked in a period as meter.Lines with Charge set.

// chargeKeys maps bookings to the charge keys the ledger holds for them.
type chargeKeys map[int64][]existingKey

func (ck chargeKeys) add(booking int64, p meter.Period, typ string, gpuSeconds int64, rev int, start int64) {
	ck[booking] = foldKey(ck[booking], p, meter.Booked, typ, gpuSeconds, rev, start, booking)
}

// planCharges returns the charge lines that bring every booking of bcs to
// its charges as computed now, in booking, period, type order.
func planCharges(cluster string, bcs []meter.BookingCharge, existing chargeKeys, closed booker) []meter.Line {
	var out []meter.Line
	for _, bc := range bcs {
		id := bc.Booked.ID
		ex := existing[id]
		seen := make([]bool, len(ex))
		first := len(out)
		for _, u := range bc.Charges {
			u.Booking, u.Tier, u.Final, u.Run = id, meter.Booked, true, meter.RunKey{Cluster: cluster}
			l := meter.Line{Usage: u, Account: bc.Booked.Account, Booked: closed.book(u.Period), Charge: true}
			if i := slices.IndexFunc(ex, func(k existingKey) bool { return k.Period == u.Period && k.Type == u.Type }); i >= 0 {
				seen[i] = true
				if ex[i].Sum == u.GPUSeconds {
					continue
				}
				l.Revision, l.GPUSeconds = ex[i].MaxRev+1, u.GPUSeconds-ex[i].Sum
			}
			out = append(out, l)
		}
		for i, k := range ex {
			if seen[i] || k.Sum == 0 {
				continue
			}
			out = append(out, meter.Line{
				Usage: meter.Usage{Run: meter.RunKey{Cluster: cluster}, Period: k.Period, Tier: meter.Booked, Type: k.Type,
					Start: k.FirstFrom, End: k.FirstFrom, GPUSeconds: -k.Sum, Final: true, Booking: id},
				Account: bc.Booked.Account, Revision: k.MaxRev + 1, Booked: closed.book(k.Period), Charge: true,
			})
		}
		slices.SortFunc(out[first:], func(a, b meter.Line) int {
			return cmp.Or(cmp.Compare(a.Period, b.Period), cmp.Compare(a.Type, b.Type))
		})
	}
	return out
}

// ApplyCharges writes the lines that bring each booking of bcs to the
// charges it holds (an empty Charges reverses the booking's lines to
// zero), in one transaction. Bookings not in bcs are left alone.
func (d *DB) ApplyCharges(ctx context.Context, cluster string, asOf int64, bcs []meter.BookingCharge) (meter.WriteStats, error) {
	st := meter.WriteStats{Runs: len(bcs)}
	err := d.withWrite(ctx, cluster, func(tx *sqlx.Tx) error {
		st = meter.WriteStats{Runs: len(bcs), Checked: len(bcs)}
		closed, err := loadClosed(ctx, tx, cluster)
		if err != nil {
			return err
		}
		existing, err := loadCharges(ctx, tx, cluster, bcs)
		if err != nil {
			return err
		}
		lines := planCharges(cluster, bcs, existing, closed)
		const cols = "cluster, booking_id, usage_period, gpu_type, revision, booked_period, account, gpu_count, charge_start, charge_end, gpu_seconds, written_at"
		for len(lines) > 0 {
			n := min(len(lines), rowsPerInsert/2)
			args := make([]any, 0, 12*n)
			for _, l := range lines[:n] {
				args = append(args, cluster, l.Booking, l.Period.String(), l.Type, l.Revision, l.Booked.String(), l.Account,
					l.Count, l.Start, l.End, l.GPUSeconds, asOf)
				countLine(l, &st)
			}
			if _, err := tx.ExecContext(ctx, multiInsert("booking_charge", cols, 12, n), args...); err != nil {
				return fmt.Errorf("insert %d booking charge lines: %w", n, err)
			}
			lines = lines[n:]
		}
		return nil
	})
	return st, err
}

// loadCharges reads the charge lines the ledger holds for the bookings of bcs.
func loadCharges(ctx context.Context, tx q, cluster string, bcs []meter.BookingCharge) (chargeKeys, error) {
	out := chargeKeys{}
	ids := make([]int64, 0, len(bcs))
	for _, bc := range bcs {
		ids = append(ids, bc.Booked.ID)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	pc := periodCache{}
	for len(ids) > 0 {
		n := min(len(ids), 1000)
		var b strings.Builder
		b.WriteString("SELECT booking_id, usage_period, gpu_type, revision, charge_start, gpu_seconds FROM booking_charge WHERE cluster = ? AND booking_id IN (")
		for i, id := range ids[:n] {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatInt(id, 10))
		}
		b.WriteByte(')')
		ids = ids[n:]
		rows, err := tx.QueryContext(ctx, b.String(), cluster)
		if err != nil {
			return nil, fmt.Errorf("read booking charges: %w", err)
		}
		for rows.Next() {
			var (
				id, start, sec int64
				rev            int
				period, typ    string
			)
			if err := rows.Scan(&id, &period, &typ, &rev, &start, &sec); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read booking charge: %w", err)
			}
			p, err := pc.parse([]byte(period))
			if err != nil {
				rows.Close()
				return nil, err
			}
			out.add(id, p, typ, sec, rev, start)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("read booking charges: %w", err)
		}
	}
	return out, nil
}

// Charges streams the booking charge lines booked in q.Booked (ordered:
// by booking, usage period, type, revision).
func (d *DB) Charges(ctx context.Context, cluster string, lq LineQuery, fn func(meter.Line) error) error {
	query := "SELECT booking_id, usage_period, gpu_type, revision, booked_period, account, gpu_count, charge_start, charge_end, gpu_seconds FROM booking_charge WHERE cluster = ? AND booked_period = ?"
	args := []any{cluster, lq.Booked.String()}
	if lq.Account != "" {
		query += " AND account = ?"
		args = append(args, lq.Account)
	}
	if lq.Ordered {
		query += " ORDER BY booking_id, usage_period, gpu_type, revision"
	}
	rows, err := d.db.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("read booking charges of %s: %w", lq.Booked, err)
	}
	defer rows.Close()
	pc := periodCache{}
	for rows.Next() {
		var period, booked []byte
		l := meter.Line{Usage: meter.Usage{Run: meter.RunKey{Cluster: cluster}, Tier: meter.Booked, Final: true}, Charge: true}
		if err := rows.Scan(&l.Booking, &period, &l.Type, &l.Revision, &booked, &l.Account, &l.Count, &l.Start, &l.End, &l.GPUSeconds); err != nil {
			return fmt.Errorf("read booking charge: %w", err)
		}
		if l.Period, err = pc.parse(period); err != nil {
			return err
		}
		if l.Booked, err = pc.parse(booked); err != nil {
			return err
		}
		if err := fn(l); err != nil {
			return err
		}
	}
	return rows.Err()
}

// ApplyCharges: see DB.ApplyCharges.
func (m *Memory) ApplyCharges(_ context.Context, cluster string, asOf int64, bcs []meter.BookingCharge) (meter.WriteStats, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.cluster(cluster)
	st := meter.WriteStats{Runs: len(bcs), Checked: len(bcs)}
	existing := chargeKeys{}
	for _, l := range c.charges {
		existing.add(l.Booking, l.Period, l.Type, l.GPUSeconds, l.Revision, l.Start)
	}
	lines := planCharges(cluster, bcs, existing, c.closed())
	seen := map[[4]string]bool{}
	for _, l := range c.charges {
		seen[chargeKey(l)] = true
	}
	for _, l := range lines {
		if seen[chargeKey(l)] {
			return meter.WriteStats{}, fmt.Errorf("insert booking charge %d %s %s rev %d: duplicate key", l.Booking, l.Period, l.Type, l.Revision)
		}
	}
	for _, l := range lines {
		c.charges = append(c.charges, l)
		countLine(l, &st)
	}
	return st, nil
}

func chargeKey(l meter.Line) [4]string {
	return [4]string{strconv.FormatInt(l.Booking, 10), l.Period.String(), l.Type, strconv.Itoa(l.Revision)}
}

// Charges: see DB.Charges.
func (m *Memory) Charges(_ context.Context, cluster string, q LineQuery, fn func(meter.Line) error) error {
	m.mu.Lock()
	out := matching(m.cluster(cluster).charges, q, func(l meter.Line) meter.Period { return l.Booked })
	m.mu.Unlock()
	if q.Ordered {
		slices.SortFunc(out, func(a, b meter.Line) int {
			return cmp.Or(cmp.Compare(a.Booking, b.Booking), cmp.Compare(a.Period, b.Period), cmp.Compare(a.Type, b.Type), cmp.Compare(a.Revision, b.Revision))
		})
	}
	for _, l := range out {
		if err := fn(l); err != nil {
			return err
		}
	}
	return nil
}
