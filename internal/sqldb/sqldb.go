package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
	"github.com/pressly/goose/v3"

	"github.com/gpubridge/gpubridge/internal/lease"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Connector is the connector of the MariaDB database named by dsn,
// forcing UTC time parsing; it connects nothing until asked. A dsn that
// lists several nodes (SplitDSN) gives a connector that connects to the
// first healthy one (see nodes); one DSN gives the driver's own.
func Connector(dsn string) (driver.Connector, error) {
	list := SplitDSN(dsn)
	if len(list) == 1 {
		return connector(dsn, 0)
	}
	n := &nodes{}
	n.used.Store(-1)
	for _, d := range list {
		c, err := connector(d, nodeTimeout)
		if err != nil {
			return nil, err
		}
		cfg, _ := mysql.ParseDSN(d)
		n.addrs = append(n.addrs, cfg.Addr)
		n.conns = append(n.conns, c)
	}
	return n, nil
}

// connector is the driver's connector of one DSN; dial bounds the dial
// when the DSN does not (0: the driver's default).
func connector(dsn string, dial time.Duration) (driver.Connector, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("database DSN %s: %w", Redact(dsn), err)
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["time_zone"] = "'+00:00'"
	if cfg.Timeout == 0 {
		cfg.Timeout = dial
	}
	return mysql.NewConnector(cfg)
}

// NodeOf is the address of the node a pool made by Connector over
// several nodes connected to last ("" for a single DSN, or when none was
// reachable).
func NodeOf(c driver.Connector) string {
	if n, ok := c.(*nodes); ok {
		return n.Node()
	}
	return ""
}

// Pool is a pool over c with gpubridge's settings (a few connections,
// recycled every five minutes); it connects at its first statement.
func Pool(c driver.Connector) *sqlx.DB {
	db := sqlx.NewDb(sql.OpenDB(c), "mysql")
	db.SetMaxOpenConns(8)
	db.SetConnMaxLifetime(5 * time.Minute)
	return db
}

// Open connects to the MariaDB database named by dsn, forcing UTC time
// parsing, and checks the connection. It does not migrate.
func Open(ctx context.Context, dsn string) (*sqlx.DB, error) {
	c, err := Connector(dsn)
	if err != nil {
		return nil, err
	}
	db := Pool(c)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to database %s: %w", Redact(dsn), err)
	}
	return db, nil
}

// Migrate applies every embedded migration not yet applied.
func Migrate(ctx context.Context, db *sqlx.DB) error {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectMySQL, db.DB, sub, goose.WithAllowOutofOrder(true))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}

// OpenMigrated is Open followed by Migrate.
func OpenMigrated(ctx context.Context, dsn string) (*sqlx.DB, error) {
	db, err := Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if err := Migrate(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// WithTx runs fn in a transaction: committed when fn returns nil, rolled
// back otherwise (and on panic). The commit error is returned. A
// transaction whose ctx ended (the client gave up, its answer is lost) is
// rolled back, never committed. Before the commit it fences with the lease
// tokens ctx carries (internal/lease: the daemon's jobs carry the leader's),
// so a leader that lost its lease commits nothing (lease.ErrFenced).
//
// An attempt that failed on a transient conflict (Conflict: a deadlock,
// Galera's certification failure, a node not ready) or lost its
// connection before the commit committed nothing: WithTx runs fn again,
// from the start in a new transaction, after a jittered exponential
// backoff (DefaultRetry), and counts the retry (Retries). fn may
// therefore run more than once: it must only act through tx and reset
// what it collects. After the last attempt the error wraps
// ErrRetriesExhausted and the last failure.
func WithTx(ctx context.Context, db *sqlx.DB, fn func(*sqlx.Tx) error) error {
	return DefaultRetry.WithTx(ctx, db, fn)
}

// WithTx is sqldb.WithTx bounded by r.
func (r Retry) WithTx(ctx context.Context, db *sqlx.DB, fn func(*sqlx.Tx) error) error {
	for try := 1; ; try++ {
		committing, err := withTxOnce(ctx, db, fn)
		reason := Conflict(err)
		if reason == "" && !committing && lostConn(err) {
			reason = "connection lost"
		}
		switch {
		case reason == "":
			return err
		case try >= r.Attempts:
			return fmt.Errorf("%w (%d attempts, the last one: %s): %w", ErrRetriesExhausted, try, reason, err)
		case !r.wait(ctx, try):
			return fmt.Errorf("not committed: %w (after a %s: %v)", ctx.Err(), reason, err)
		}
		count(reason)
	}
}

// withTxOnce is one attempt of WithTx, on a connection of its own; a
// connection whose node said it is not ready (1047), or whose session
// could not be set back to autocommit, is closed, not given back to the
// pool. committing reports a failure of the commit itself (its outcome is
// unknown when the connection was lost).
//
// The transaction runs with autocommit off and opens a savepoint that its
// commit checks first (checkSavepoint): MariaDB 11.8's Galera, aborting a
// transaction for a conflicting writeset of another node while the client
// was between two statements, was seen to roll it back without telling
// the next statement, which then ran and committed on its own
// (autocommit): a booking stored by a half transaction. With autocommit
// off those statements open a new transaction instead; it has no
// savepoint, the check fails, and it is rolled back and run again.
func withTxOnce(ctx context.Context, db *sqlx.DB, fn func(*sqlx.Tx) error) (committing bool, err error) {
	conn, err := db.Connx(ctx)
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	bad := false
	defer func() {
		if !bad && Conflict(err) != "node not ready" {
			// Back to autocommit before the pool hands it out again.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_, rerr := conn.ExecContext(rctx, "SET autocommit = 1")
			cancel()
			bad = rerr != nil
		} else {
			bad = true
		}
		if bad {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		_ = conn.Close()
	}()
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("begin transaction: %w", err)
	}
	for _, q := range []string{"SET autocommit = 0", "SAVEPOINT " + savepoint} {
		if _, err = tx.ExecContext(ctx, q); err != nil {
			_ = tx.Rollback()
			return false, fmt.Errorf("begin transaction: %w", err)
		}
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
	}()
	if err = fn(tx); err != nil {
		return false, err
	}
	if err = ctx.Err(); err != nil {
		return false, fmt.Errorf("not committed: %w", err)
	}
	if err = lease.FenceContext(ctx, tx); err != nil {
		return false, err
	}
	if err = checkSavepoint(ctx, tx); err != nil {
		return false, err
	}
	if f, ok := ctx.Value(commitFaultKey{}).(commitFault); ok {
		if err = f.fault(); err != nil {
			_ = tx.Rollback()
			if f.rolledBack != nil {
				f.rolledBack()
			}
			return true, fmt.Errorf("commit: %w", err)
		}
	}
	if err = tx.Commit(); err != nil {
		return true, fmt.Errorf("commit: %w", err)
	}
	return false, nil
}

// savepoint is the savepoint every WithTx transaction opens first.
const savepoint = "gpubridge_tx"

// errAborted: the transaction's savepoint is gone before its commit: the
// server rolled the transaction back and did not say so (see withTxOnce).
var errAborted = errors.New("the database rolled the transaction back before its commit without reporting it (Galera conflict with another node's write)")

// checkSavepoint checks that tx is still the transaction that opened the
// savepoint (errAborted otherwise).
func checkSavepoint(ctx context.Context, tx *sqlx.Tx) error {
	_, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT "+savepoint)
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1305 { // SAVEPOINT does not exist
		return fmt.Errorf("%w: %v", errAborted, err)
	}
	if err != nil {
		return fmt.Errorf("check transaction: %w", err)
	}
	return nil
}

// Redact returns dsn with its password replaced, for logs and errors (each
// of a list of nodes' DSNs).
func Redact(dsn string) string {
	if list := SplitDSN(dsn); len(list) > 1 {
		for i, d := range list {
			list[i] = Redact(d)
		}
		return strings.Join(list, ",")
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "<unparsable DSN>"
	}
	if cfg.Passwd != "" {
		cfg.Passwd = "xxxxx"
	}
	return cfg.FormatDSN()
}

// Execer is satisfied by *sqlx.DB and *sqlx.Tx.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	NamedExecContext(ctx context.Context, query string, arg any) (sql.Result, error)
}
