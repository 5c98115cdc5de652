package lease

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
)

// takeAttempts bounds the retries of a take that lost a write conflict
// (Galera certification, a deadlock, a concurrent insert): the retry reads
// the winner's row and returns ErrHeld.
const takeAttempts = 4

// errRaced: the row changed between our read and our write.
var errRaced = errors.New("lease changed while taking it")

// Take takes the lease if it is free, expired or already this Lease's; a
// take always starts a new epoch. It returns a *HeldError (ErrHeld) when
// another holder has it.
func (l *Lease) Take(ctx context.Context) error {
	var err error
	for attempt := range takeAttempts {
		if err = l.takeOnce(ctx); !Retryable(err) {
			break
		}
		if !sleep(ctx, time.Duration(10<<attempt)*time.Millisecond) {
			break
		}
	}
	if err != nil && !errors.Is(err, ErrHeld) {
		return fmt.Errorf("take lease %s: %w", l.name, err)
	}
	return err
}

// current is the lease row a take reads.
type current struct {
	holder, info string
	epoch        int64
	since        time.Time
	leftMicros   int64
}

// takeOnce is one take transaction: read the row for update, then insert
// it (none yet) or take it over with epoch+1 (expired, or ours), guarded by
// the epoch read so that a concurrent taker's write makes ours fail.
func (l *Lease) takeOnce(ctx context.Context) (err error) {
	start := l.now()
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var c current
	err = tx.QueryRowContext(ctx, `SELECT holder, info, epoch, taken_at, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at)
		FROM leases WHERE name = ? FOR UPDATE`, l.name).Scan(&c.holder, &c.info, &c.epoch, &c.since, &c.leftMicros)
	epoch := c.epoch + 1
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, err = tx.ExecContext(ctx, `INSERT INTO leases (name, holder, info, epoch, taken_at, renewed_at, expires_at)
			VALUES (?, ?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)`,
			l.name, l.holder, l.info, l.ttl.Microseconds())
		epoch = 1
	case err != nil:
		return err
	case c.leftMicros > 0 && c.holder != l.holder:
		err = &HeldError{Name: l.name, Holder: Holder{Info: c.info, Epoch: c.epoch, Since: c.since, Left: time.Duration(c.leftMicros) * time.Microsecond}}
		return err
	default:
		err = l.takeOver(ctx, tx, c.epoch)
	}
	if err != nil {
		return err
	}
	if err = tx.Commit(); err != nil {
		return err
	}
	l.granted(epoch, start)
	return nil
}

// takeOver writes the row of a free lease as ours with the next epoch.
func (l *Lease) takeOver(ctx context.Context, tx *sql.Tx, epoch int64) error {
	res, err := tx.ExecContext(ctx, `UPDATE leases SET holder = ?, info = ?, epoch = epoch + 1, fences = 0,
		taken_at = UTC_TIMESTAMP(6), renewed_at = UTC_TIMESTAMP(6), expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
		WHERE name = ? AND epoch = ?`, l.holder, l.info, l.ttl.Microseconds(), l.name, epoch)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errRaced
	}
	return nil
}

// Renew extends the lease by its TTL from the database's now. It returns
// ErrLost (and the lease is no longer held) when the lease expired or
// another holder took it; another error leaves the lease as it was (its
// renew deadline decides).
func (l *Lease) Renew(ctx context.Context) error {
	start := l.now()
	epoch := l.Epoch()
	if epoch == 0 {
		return fmt.Errorf("renew lease %s: %w", l.name, ErrLost)
	}
	res, err := l.db.ExecContext(ctx, `UPDATE leases SET renewed_at = UTC_TIMESTAMP(6), expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
		WHERE name = ? AND holder = ? AND epoch = ? AND expires_at > UTC_TIMESTAMP(6)`, l.ttl.Microseconds(), l.name, l.holder, epoch)
	if err != nil {
		return fmt.Errorf("renew lease %s: %w", l.name, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		l.forget()
		return fmt.Errorf("renew lease %s (epoch %d): %w", l.name, epoch, ErrLost)
	}
	l.granted(epoch, start)
	return nil
}

// Release ends the lease now (its expiry becomes the database's now), if
// this Lease still holds it; the lease is no longer held either way.
func (l *Lease) Release(ctx context.Context) error {
	epoch := l.Epoch()
	l.forget()
	if epoch == 0 {
		return nil
	}
	_, err := l.db.ExecContext(ctx, `UPDATE leases SET expires_at = UTC_TIMESTAMP(6), renewed_at = UTC_TIMESTAMP(6)
		WHERE name = ? AND holder = ? AND epoch = ? AND expires_at > UTC_TIMESTAMP(6)`, l.name, l.holder, epoch)
	if err != nil {
		return fmt.Errorf("release lease %s: %w", l.name, err)
	}
	return nil
}

// Retryable reports a failure that a new attempt may not meet: a write
// conflict (1213: deadlock, or Galera's certification failure), a lock
// wait timeout (1205), a concurrent insert of the same row (1062), a
// Galera node not ready (1047: WSREP has not yet prepared node).
func Retryable(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1213, 1205, 1062, 1047:
			return true
		}
	}
	return errors.Is(err, errRaced)
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
