package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
)

func TestConflict(t *testing.T) {
	cases := map[string]struct {
		err  error
		want string
	}{
		"certification failure": {&mysql.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock; try restarting transaction"}, "deadlock"},
		"wrapped":               {fmt.Errorf("commit: %w", &mysql.MySQLError{Number: 1213}), "deadlock"},
		"lock wait timeout":     {&mysql.MySQLError{Number: 1205}, "lock wait timeout"},
		"snapshot changed":      {&mysql.MySQLError{Number: 1020}, "snapshot changed"},
		"node not ready":        {&mysql.MySQLError{Number: 1047, Message: "WSREP has not yet prepared node for application use"}, "node not ready"},
		"duplicate key":         {&mysql.MySQLError{Number: 1062}, ""},
		"syntax":                {&mysql.MySQLError{Number: 1064}, ""},
		"other":                 {errors.New("boom"), ""},
		"aborted silently":      {fmt.Errorf("%w: x", errAborted), "aborted silently"},
		"nil":                   {nil, ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Conflict(c.err); got != c.want {
				t.Errorf("Conflict(%v) = %q, want %q", c.err, got, c.want)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	r := Retry{Attempts: 8, Base: 10 * time.Millisecond, Max: 100 * time.Millisecond}
	want := []time.Duration{10, 20, 40, 80, 100, 100}
	for i, w := range want {
		if got := r.Backoff(i + 1); got != w*time.Millisecond {
			t.Errorf("Backoff(%d) = %v, want %v", i+1, got, w*time.Millisecond)
		}
	}
}

// failDriver is a fault-injecting driver: every commit fails with
// commitErr while remaining > 0 (then succeeds), counting commits and
// rollbacks.
type failDriver struct {
	commitErr          error
	commits, rollbacks atomic.Int32
	closedConns        atomic.Int32
	remaining          atomic.Int32
	lostSavepoints     atomic.Int32
}

func (d *failDriver) Connect(context.Context) (driver.Conn, error) {
	return &failConn{d: d}, nil
}
func (d *failDriver) Driver() driver.Driver { return nil }

type failConn struct{ d *failDriver }

func (c *failConn) Prepare(string) (driver.Stmt, error) { return nil, errors.New("no statements") }
func (c *failConn) Close() error                        { c.d.closedConns.Add(1); return nil }
func (c *failConn) Begin() (driver.Tx, error)           { return &failTx{c.d}, nil }

// ExecContext answers the statements WithTx sends itself (autocommit,
// savepoint); a savepoint release fails with 1305 while the driver's
// lostSavepoints > 0, as after a silent rollback.
func (c *failConn) ExecContext(_ context.Context, q string, _ []driver.NamedValue) (driver.Result, error) {
	if strings.HasPrefix(q, "RELEASE SAVEPOINT") && c.d.lostSavepoints.Add(-1) >= 0 {
		return nil, &mysql.MySQLError{Number: 1305, Message: "SAVEPOINT gpubridge_tx does not exist"}
	}
	return driver.ResultNoRows, nil
}

type failTx struct{ d *failDriver }

func (t *failTx) Commit() error {
	if t.d.remaining.Add(-1) >= 0 {
		return t.d.commitErr
	}
	t.d.commits.Add(1)
	return nil
}
func (t *failTx) Rollback() error { t.d.rollbacks.Add(1); return nil }

func TestWithTxRetries(t *testing.T) {
	fast := Retry{Attempts: 4, Base: time.Millisecond, Max: 2 * time.Millisecond}
	cases := map[string]struct {
		fails     int32
		err       error
		wantRuns  int
		wantErr   error // nil: committed
		wantCount string
	}{
		"certified on the second attempt": {1, &mysql.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock; try restarting transaction"}, 2, nil, "deadlock"},
		"node ready on the third":         {2, &mysql.MySQLError{Number: 1047, Message: "WSREP has not yet prepared node for application use"}, 3, nil, "node not ready"},
		"conflicts through every attempt": {9, &mysql.MySQLError{Number: 1213}, 4, ErrRetriesExhausted, "deadlock"},
		"duplicate key is an answer":      {1, &mysql.MySQLError{Number: 1062}, 1, &mysql.MySQLError{Number: 1062}, ""},
		"connection lost in the commit":   {1, mysql.ErrInvalidConn, 1, mysql.ErrInvalidConn, ""},
	}
	d := &failDriver{}
	d.lostSavepoints.Store(1)
	db := sqlx.NewDb(sql.OpenDB(d), "mysql")
	defer db.Close()
	before := Retries()["aborted silently"]
	runs := 0
	if err := fast.WithTx(context.Background(), db, func(*sqlx.Tx) error { runs++; return nil }); err != nil || runs != 2 || d.commits.Load() != 1 {
		t.Errorf("a transaction rolled back silently: WithTx = %v after %d runs, %d commits; want committed by the second run", err, runs, d.commits.Load())
	}
	if got := Retries()["aborted silently"] - before; got != 1 {
		t.Errorf("silent rollbacks retried %d, want 1", got)
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			d := &failDriver{commitErr: c.err}
			d.remaining.Store(c.fails)
			db := sqlx.NewDb(sql.OpenDB(d), "mysql")
			defer db.Close()
			before := Retries()[c.wantCount]
			runs := 0
			err := fast.WithTx(context.Background(), db, func(*sqlx.Tx) error { runs++; return nil })
			if runs != c.wantRuns {
				t.Errorf("fn ran %d times, want %d", runs, c.wantRuns)
			}
			switch {
			case c.wantErr == nil && err != nil:
				t.Errorf("WithTx: %v, want committed", err)
			case c.wantErr != nil && !errors.Is(err, c.wantErr) && err.Error() != "commit: "+c.wantErr.Error():
				t.Errorf("WithTx: %v, want %v", err, c.wantErr)
			}
			if c.wantCount != "" {
				if got := Retries()[c.wantCount] - before; got != uint64(c.wantRuns-1) {
					t.Errorf("%s retries counted %d, want %d", c.wantCount, got, c.wantRuns-1)
				}
			}
			if c.wantCount == "node not ready" && d.closedConns.Load() < int32(c.fails) {
				t.Errorf("%d connections closed, want every one whose node was not ready (%d)", d.closedConns.Load(), c.fails)
			}
		})
	}
}

func TestWithTxFnErrorNotRetried(t *testing.T) {
	d := &failDriver{}
	db := sqlx.NewDb(sql.OpenDB(d), "mysql")
	defer db.Close()
	runs := 0
	boom := errors.New("refused")
	if err := WithTx(context.Background(), db, func(*sqlx.Tx) error { runs++; return boom }); !errors.Is(err, boom) || runs != 1 {
		t.Fatalf("WithTx = %v after %d runs, want %v after 1", err, runs, boom)
	}
	if d.rollbacks.Load() != 1 || d.commits.Load() != 0 {
		t.Fatalf("%d rollbacks, %d commits; want 1, 0", d.rollbacks.Load(), d.commits.Load())
	}
}
