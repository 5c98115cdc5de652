package app

import (
	"context"

	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// Migrate brings gpubridge's database (database.dsn) up to this version's
// schema: it creates the schema in an empty database, applies the pending
// migrations of a gpubridge database, and refuses one that holds tables
// that are not gpubridge's. It returns what it found (before).
func (e *Env) Migrate(ctx context.Context) (sqldb.Schema, error) {
	c, err := e.Config()
	if err != nil {
		return sqldb.Schema{}, err
	}
	if err := c.RequireDatabase(); err != nil {
		return sqldb.Schema{}, err
	}
	db, err := sqldb.Open(ctx, c.Database.DSN)
	if err != nil {
		return sqldb.Schema{}, err
	}
	defer db.Close()
	return sqldb.Prepare(ctx, db, sqldb.Policy{InitEmpty: true})
}
