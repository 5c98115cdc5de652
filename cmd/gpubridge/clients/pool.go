package clients

import (
	"context"
	"database/sql/driver"
	"fmt"
	"sync/atomic"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// pool is one database pool of a Set, made with it: like the slurmrestd
// client, it connects nothing until a statement needs a connection. The
// pool of gpubridge's own database prepares the schema (checks it and,
// as the Set's policy allows, creates or migrates it) before its first
// connection is handed out, and again before the next one after a
// failed preparation; until the preparation succeeds every statement
// fails with its error (sqldb.ErrNoSchema, sqldb.ErrForeignSchema, or
// the database being down).
type pool struct {
	fp   string // fingerprint of the settings it was made with
	db   *sqlx.DB
	err  error // the configuration made no pool: every use's error
	gate *gate

	closed atomic.Bool
}

// newPool makes the pool of dsn through connect; prepare (nil: nothing
// to prepare) runs before the first connection. A configuration problem
// (required is its error) or a DSN that does not parse becomes the error
// of every use.
func newPool(fp, what, dsn string, required error, connect func(dsn string) (driver.Connector, error), prepare func(ctx context.Context, db *sqlx.DB) error) *pool {
	p := &pool{fp: fp}
	if p.err = required; p.err != nil {
		return p
	}
	c, err := connect(dsn)
	if err != nil {
		p.err = err
		return p
	}
	p.gate = &gate{inner: c, what: what, prepare: prepare, sem: make(chan struct{}, 1)}
	p.db = sqldb.Pool(p.gate)
	return p
}

// get returns the pool (it connects nothing).
func (p *pool) get() (*sqlx.DB, error) {
	if p.closed.Load() {
		return nil, ErrClosed
	}
	if p.err != nil {
		return nil, p.err
	}
	return p.db, nil
}

// isBuilt reports whether the pool reached its database (and prepared
// it), and is not closed.
func (p *pool) isBuilt() bool {
	return p.gate != nil && p.gate.reached.Load() && !p.closed.Load()
}

// shutdown closes the pool; later uses fail with ErrClosed.
func (p *pool) shutdown() {
	if p.closed.Swap(true) || p.db == nil {
		return
	}
	_ = p.db.Close()
}

// gate is the pool's connector: it prepares the database once, before
// the first connection it hands out, then connects through inner.
type gate struct {
	inner   driver.Connector
	what    string // "database \"gpubridge\" (u:***@tcp(...)/...)" for errors
	prepare func(ctx context.Context, db *sqlx.DB) error

	sem      chan struct{} // one preparation at a time; waiters honour their context
	prepared atomic.Bool
	reached  atomic.Bool // a connection was made
}

func (g *gate) Driver() driver.Driver { return g.inner.Driver() }

// Connect prepares the database if it is not prepared yet, then connects.
func (g *gate) Connect(ctx context.Context) (driver.Conn, error) {
	if !g.prepared.Load() {
		if err := g.prepareOnce(ctx); err != nil {
			return nil, err
		}
	}
	conn, err := g.inner.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", g.what, err)
	}
	g.reached.Store(true)
	return conn, nil
}

// prepareOnce runs the preparation on a pool of its own over inner (the
// preparing pool cannot use the pool it gates), unless another caller
// did meanwhile.
func (g *gate) prepareOnce(ctx context.Context) error {
	select {
	case g.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-g.sem }()
	if g.prepared.Load() {
		return nil
	}
	if g.prepare != nil {
		db := sqldb.Pool(g.inner)
		defer db.Close()
		if err := db.PingContext(ctx); err != nil {
			return fmt.Errorf("connect to %s: %w", g.what, err)
		}
		if err := g.prepare(ctx, db); err != nil {
			return err
		}
	}
	g.prepared.Store(true)
	return nil
}
