package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/money"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

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

// ClosedPeriods: see the method list in store.go.
func (d *DB) ClosedPeriods(ctx context.Context, cluster string) ([]meter.Period, error) {
	b, err := loadClosed(ctx, d.db, cluster)
	return b.periods(), err
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
