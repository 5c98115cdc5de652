package leasetest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
)

// ErrUserLock is what the pool answers a user-lock function with.
var ErrUserLock = &mysql.MySQLError{Number: 1235, Message: "This version of MariaDB doesn't yet support 'GET_LOCK in cluster (WSREP_ON=ON)'"}

// userLockFuncs are the functions refused.
var userLockFuncs = []string{"GET_LOCK", "RELEASE_LOCK", "IS_USED_LOCK", "IS_FREE_LOCK", "RELEASE_ALL_LOCKS"}

// Refused counts the statements refused by every pool of this package.
var Refused atomic.Int64

// Open connects to dsn as sqldb.Open does (UTC times, time_zone +00:00),
// through a driver that refuses the user-lock functions. It does not
// migrate.
func Open(ctx context.Context, dsn string) (*sqlx.DB, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	cfg.ParseTime, cfg.Loc = true, time.UTC
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["time_zone"] = "'+00:00'"
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sqlx.NewDb(sql.OpenDB(connector{c}), "mysql")
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect: %w", err)
	}
	return db, nil
}

// refuse is ErrUserLock for a statement calling a user-lock function.
func refuse(query string) error {
	q := strings.ToUpper(query)
	for _, f := range userLockFuncs {
		if strings.Contains(q, f) {
			Refused.Add(1)
			return ErrUserLock
		}
	}
	return nil
}

type connector struct{ driver.Connector }

func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return conn{cn}, nil
}

// conn is the driver's connection with every statement checked first.
type conn struct{ driver.Conn }

var (
	_ driver.QueryerContext     = conn{}
	_ driver.ExecerContext      = conn{}
	_ driver.ConnPrepareContext = conn{}
	_ driver.ConnBeginTx        = conn{}
	_ driver.Pinger             = conn{}
	_ driver.SessionResetter    = conn{}
	_ driver.Validator          = conn{}
	_ driver.NamedValueChecker  = conn{}
)

func (c conn) Prepare(query string) (driver.Stmt, error) {
	if err := refuse(query); err != nil {
		return nil, err
	}
	return c.Conn.Prepare(query)
}

func (c conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if err := refuse(query); err != nil {
		return nil, err
	}
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
}

func (c conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if err := refuse(query); err != nil {
		return nil, err
	}
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
}

func (c conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if err := refuse(query); err != nil {
		return nil, err
	}
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (c conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c conn) Ping(ctx context.Context) error { return c.Conn.(driver.Pinger).Ping(ctx) }

func (c conn) ResetSession(ctx context.Context) error {
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}

func (c conn) IsValid() bool { return c.Conn.(driver.Validator).IsValid() }

func (c conn) CheckNamedValue(v *driver.NamedValue) error {
	return c.Conn.(driver.NamedValueChecker).CheckNamedValue(v)
}
