package ledger

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/money"
)

const creditCols = "credit_key, kind, loss_period, booked_period, tenant, account, amount_minor, currency, minor_units, event_id, node, job_id, submit_time, booking_id, gpu_seconds, loss_start, loss_end, reason, written_at"

type creditRow struct {
	Key        string `db:"credit_key"`
	Kind       string `db:"kind"`
	Period     string `db:"loss_period"`
	Booked     string `db:"booked_period"`
	Tenant     string `db:"tenant"`
	Account    string `db:"account"`
	Amount     int64  `db:"amount_minor"`
	Currency   string `db:"currency"`
	Minor      int    `db:"minor_units"`
	EventID    int64  `db:"event_id"`
	Node       string `db:"node"`
	JobID      uint32 `db:"job_id"`
	Submit     int64  `db:"submit_time"`
	BookingID  int64  `db:"booking_id"`
	GPUSeconds int64  `db:"gpu_seconds"`
	Start      int64  `db:"loss_start"`
	End        int64  `db:"loss_end"`
	Reason     string `db:"reason"`
	WrittenAt  int64  `db:"written_at"`
}

func (r creditRow) credit() (Credit, error) {
	p, err := meter.ParsePeriod(r.Period)
	if err != nil {
		return Credit{}, fmt.Errorf("credit %q: %w", r.Key, err)
	}
	b, err := meter.ParsePeriod(r.Booked)
	if err != nil {
		return Credit{}, fmt.Errorf("credit %q: %w", r.Key, err)
	}
	return Credit{Key: r.Key, Kind: r.Kind, Period: p, Booked: b, Tenant: r.Tenant, Account: r.Account,
		Amount:  money.New(r.Amount, money.Currency{Code: r.Currency, Minor: r.Minor}),
		EventID: r.EventID, Node: r.Node, JobID: r.JobID, Submit: r.Submit, BookingID: r.BookingID, GPUSeconds: r.GPUSeconds,
		Start: r.Start, End: r.End, Reason: r.Reason, WrittenAt: r.WrittenAt}, nil
}

// WriteCredits: see Memory.WriteCredits. It takes the cluster's ledger
// lock and writes on the lock's connection, in one transaction: the keys
// already there are skipped, the others inserted (the primary key refuses
// a duplicate written meanwhile by another process, which fails the batch:
// the next run writes it).
func (d *DB) WriteCredits(ctx context.Context, cluster string, cs []Credit, now time.Time) ([]Credit, error) {
	if err := checkCredits(cs); err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		return nil, nil
	}
	release, err := d.Lock(ctx, cluster, creditWait)
	if err != nil {
		return nil, fmt.Errorf("write credits: %w", err)
	}
	defer release()
	var out []Credit
	err = d.withWrite(ctx, cluster, func(tx *sqlx.Tx) error {
		out = out[:0]
		closed, err := loadClosed(ctx, tx, cluster)
		if err != nil {
			return err
		}
		keys := make([]string, len(cs))
		for i, c := range cs {
			keys[i] = c.Key
		}
		have := map[string]bool{}
		for len(keys) > 0 {
			part := keys[:min(len(keys), 500)]
			keys = keys[len(part):]
			query, args, err := sqlx.In("SELECT credit_key FROM ledger_credit WHERE cluster = ? AND credit_key IN (?)", cluster, part)
			if err != nil {
				return err
			}
			var got []string
			if err := tx.SelectContext(ctx, &got, query, args...); err != nil {
				return fmt.Errorf("read credit keys: %w", err)
			}
			for _, k := range got {
				have[k] = true
			}
		}
		for _, c := range cs {
			if have[c.Key] {
				continue
			}
			have[c.Key] = true // the same key twice in one batch: once
			cur := c.Amount.Currency()
			c.Booked, c.WrittenAt, c.Reason = closed.book(c.Period), now.Unix(), clip(c.Reason)
			_, err := tx.ExecContext(ctx, "INSERT INTO ledger_credit (cluster, "+creditCols+") VALUES (?"+strings.Repeat(", ?", 19)+")",
				cluster, c.Key, c.Kind, c.Period.String(), c.Booked.String(), c.Tenant, c.Account, c.Amount.Units(), cur.Code, cur.Minor,
				c.EventID, c.Node, c.JobID, c.Submit, c.BookingID, c.GPUSeconds, c.Start, c.End, c.Reason, c.WrittenAt)
			if err != nil {
				return fmt.Errorf("insert credit %q: %w", c.Key, err)
			}
			out = append(out, c)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("write credits: %w", err)
	}
	return out, nil
}

// Credits: see Memory.Credits.
func (d *DB) Credits(ctx context.Context, cluster string, q CreditQuery, fn func(Credit) error) error {
	query := "SELECT " + creditCols + " FROM ledger_credit WHERE cluster = ? AND booked_period = ?"
	args := []any{cluster, q.Booked.String()}
	if q.Account != "" {
		query += " AND account = ?"
		args = append(args, q.Account)
	}
	var rows []creditRow
	if err := d.db.SelectContext(ctx, &rows, query+" ORDER BY account, loss_period, credit_key", args...); err != nil {
		return fmt.Errorf("read credits of %s: %w", q.Booked, err)
	}
	out := make([]Credit, 0, len(rows))
	for _, r := range rows {
		c, err := r.credit()
		if err != nil {
			return err
		}
		out = append(out, c)
	}
	// The database's collation orders like Go's strings (utf8mb4_bin);
	// sorting again costs nothing and keeps Memory's order exactly.
	for _, c := range sortCredits(out) {
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}

// RunLines: see Memory.RunLines. It reads by the primary key's prefix
// (cluster, job id, submit time).
func (d *DB) RunLines(ctx context.Context, cluster string, runs []meter.RunKey, fn func(meter.Line) error) error {
	for len(runs) > 0 {
		part := runs[:min(len(runs), 200)]
		runs = runs[len(part):]
		var b strings.Builder
		args := []any{cluster}
		b.WriteString("SELECT job_id, submit_time, usage_period, tier, gpu_type, revision, booked_period, account, user_name, gpu_count, usage_start, usage_end, gpu_seconds FROM usage_ledger WHERE cluster = ? AND (")
		for i, k := range part {
			if i > 0 {
				b.WriteString(" OR ")
			}
			b.WriteString("(job_id = ? AND submit_time = ?)")
			args = append(args, k.JobID, k.Submit)
		}
		b.WriteString(") ORDER BY job_id, submit_time, usage_period, tier, gpu_type, revision")
		var rows []struct {
			JobID   uint32 `db:"job_id"`
			Submit  int64  `db:"submit_time"`
			Period  string `db:"usage_period"`
			Tier    string `db:"tier"`
			Type    string `db:"gpu_type"`
			Rev     int    `db:"revision"`
			Booked  string `db:"booked_period"`
			Account string `db:"account"`
			User    string `db:"user_name"`
			Count   int64  `db:"gpu_count"`
			Start   int64  `db:"usage_start"`
			End     int64  `db:"usage_end"`
			GPUSec  int64  `db:"gpu_seconds"`
		}
		if err := d.db.SelectContext(ctx, &rows, b.String(), args...); err != nil {
			return fmt.Errorf("read the lines of %d run(s): %w", len(part), err)
		}
		for _, r := range rows {
			p, err := meter.ParsePeriod(r.Period)
			if err != nil {
				return err
			}
			bp, err := meter.ParsePeriod(r.Booked)
			if err != nil {
				return err
			}
			l := meter.Line{Usage: meter.Usage{Run: meter.RunKey{Cluster: cluster, JobID: r.JobID, Submit: r.Submit}, Period: p,
				Tier: meter.Tier(r.Tier), Type: r.Type, Count: r.Count, Start: r.Start, End: r.End, GPUSeconds: r.GPUSec, Final: true},
				Account: r.Account, User: r.User, Revision: r.Rev, Booked: bp}
			if err := fn(l); err != nil {
				return err
			}
		}
	}
	return nil
}
