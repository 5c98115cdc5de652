package clientstest

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// ErrDown is what a fake that is down answers.
var ErrDown = errors.New("connection refused (fake)")

// DB fakes MariaDB: Connector returns connectors whose connections
// answer Ping and the leader lease's statements (internal/lease: the
// lease is always free, so every take, renewal and release succeeds), and
// refuse everything else.
type DB struct {
	down   atomic.Bool
	opened atomic.Int32
	closed atomic.Int32
	mu     sync.Mutex
	dsns   []string
}

// SetDown makes every connection and Ping fail (true) or succeed (false).
func (f *DB) SetDown(down bool) { f.down.Store(down) }

// Opened counts the connectors Connector returned (one per pool).
func (f *DB) Opened() int { return int(f.opened.Load()) }

// ConnsClosed counts the connections database/sql closed.
func (f *DB) ConnsClosed() int { return int(f.closed.Load()) }

// DSNs lists the DSNs Connector was called with, in order.
func (f *DB) DSNs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.dsns...)
}

// Connector is a clients.Options.ConnectDB: it connects nothing.
func (f *DB) Connector(dsn string) (driver.Connector, error) {
	f.mu.Lock()
	f.dsns = append(f.dsns, dsn)
	f.mu.Unlock()
	f.opened.Add(1)
	return connector{f}, nil
}

// Prepare is a clients.Options.PrepareDB that finds a current schema.
func Prepare(context.Context, *sqlx.DB, sqldb.Policy) (sqldb.Schema, error) {
	return sqldb.Schema{Kind: sqldb.Gpubridge, Database: "fake"}, nil
}

type connector struct{ f *DB }

func (c connector) Connect(context.Context) (driver.Conn, error) {
	if c.f.down.Load() {
		return nil, ErrDown
	}
	return conn(c), nil
}
func (c connector) Driver() driver.Driver { return drv{} }

type drv struct{}

func (drv) Open(string) (driver.Conn, error) { return nil, errors.New("use the connector") }

type conn struct{ f *DB }

func (c conn) Prepare(string) (driver.Stmt, error) { return nil, errors.New("fake database: no SQL") }
func (c conn) Close() error                        { c.f.closed.Add(1); return nil }
func (c conn) Begin() (driver.Tx, error)           { return tx{}, nil }
func (c conn) Ping(context.Context) error {
	if c.f.down.Load() {
		return driver.ErrBadConn
	}
	return nil
}

// QueryContext answers the lease's read (no row: the lease is free) and
// the readiness probe's questions (sqldb.Status): a server "fake-db:3306"
// without Galera (@@wsrep_on is unknown: 1193).
func (c conn) QueryContext(_ context.Context, query string, _ []driver.NamedValue) (driver.Rows, error) {
	switch {
	case c.f.down.Load():
		return nil, driver.ErrBadConn
	case strings.HasPrefix(query, "SELECT CONCAT(@@hostname"):
		return &oneRow{value: "fake-db:3306"}, nil
	case query == "SELECT @@wsrep_on":
		return nil, &mysql.MySQLError{Number: 1193, Message: "Unknown system variable 'wsrep_on'"}
	}
	if err := c.lease(query); err != nil {
		return nil, err
	}
	return noRows{}, nil
}

// ExecContext answers the lease's writes (one row affected: granted).
func (c conn) ExecContext(_ context.Context, query string, _ []driver.NamedValue) (driver.Result, error) {
	if err := c.lease(query); err != nil {
		return nil, err
	}
	return driver.RowsAffected(1), nil
}

// lease refuses what is not a lease statement, and everything while down.
func (c conn) lease(query string) error {
	if c.f.down.Load() {
		return driver.ErrBadConn
	}
	if !strings.Contains(query, " leases ") {
		return errors.New("fake database: no SQL but the leader lease's")
	}
	return nil
}

// tx is a transaction of lease statements.
type tx struct{}

func (tx) Commit() error   { return nil }
func (tx) Rollback() error { return nil }

// oneRow is a result of one row of one value.
type oneRow struct {
	value string
	done  bool
}

func (r *oneRow) Columns() []string { return []string{"value"} }
func (r *oneRow) Close() error      { return nil }
func (r *oneRow) Next(dest []driver.Value) error {
	if r.done {
		return io.EOF
	}
	r.done = true
	dest[0] = r.value
	return nil
}

// noRows is an empty result.
type noRows struct{}

func (noRows) Columns() []string {
	return []string{"holder", "info", "epoch", "taken_at", "left"}
}
func (noRows) Close() error              { return nil }
func (noRows) Next([]driver.Value) error { return io.EOF }

// Slurm is an httptest slurmrestd serving v0.0.44's ping for one token.
type Slurm struct {
	*httptest.Server
	token    atomic.Pointer[string]
	down     atomic.Bool
	pings    atomic.Int32
	requests atomic.Int32
}

// NewSlurm starts a fake slurmrestd of cluster that accepts token.
func NewSlurm(cluster, token string) *Slurm {
	s := &Slurm{}
	s.SetToken(token)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if s.down.Load() {
			http.Error(w, `{"errors":[{"error":"down"}]}`, http.StatusServiceUnavailable)
			return
		}
		if r.Header.Get("X-SLURM-USER-TOKEN") != *s.token.Load() {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"errors":[{"error":"Authentication failure","error_number":1007}]}`)
			return
		}
		if r.URL.Path != "/slurm/v0.0.44/ping/" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"errors":[{"error":"not found"}]}`)
			return
		}
		s.pings.Add(1)
		fmt.Fprintf(w, `{"meta":{"slurm":{"cluster":%q,"release":"26.05.5"}},"pings":[{"hostname":"ctl","pinged":"UP","responding":true,"latency":10,"mode":"primary","primary":true}],"errors":[],"warnings":[]}`, cluster)
	}))
	return s
}

// SetToken changes the token the server accepts (the old one is revoked).
func (s *Slurm) SetToken(t string) { s.token.Store(&t) }

// SetDown makes every request fail with 503 (true) or be served (false).
func (s *Slurm) SetDown(down bool) { s.down.Store(down) }

// Requests counts every request received.
func (s *Slurm) Requests() int { return int(s.requests.Load()) }

// Pings counts the pings answered.
func (s *Slurm) Pings() int { return int(s.pings.Load()) }
