package app

import (
	"context"
	"fmt"

	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// Migrate brings gpubridge's database (database.dsn) up to this version's
// schema: it creates the schema in an empty database, applies the pending
// migrations of a gpubridge database, and refuses one that holds tables
// that are not gpubridge's. It returns what it found (before).
func (e *Env) Migrate(ctx context.Context) (Migrated, error) {
	c, err := e.Config()
	if err != nil {
		return Migrated{}, err
	}
	if err := c.RequireDatabase(); err != nil {
		return Migrated{}, err
	}
	db, err := sqldb.Open(ctx, c.Database.DSN)
	if err != nil {
		return Migrated{}, err
	}
	defer db.Close()
	s, err := sqldb.Prepare(ctx, db, sqldb.Policy{InitEmpty: true})
	return Migrated{s}, err
}

// Migrated is what migrate found (before it applied anything).
type Migrated struct{ sqldb.Schema }

// Text is what migrate says it found and did.
func (m Migrated) Text() string {
	total := m.Applied + m.Pending
	switch {
	case m.Kind == sqldb.Empty:
		return fmt.Sprintf("database %s: was empty; created gpubridge's schema (%d migrations)\n", m.Database, total)
	case m.Pending > 0:
		return fmt.Sprintf("database %s: applied %d pending migrations (%d in all)\n", m.Database, m.Pending, total)
	}
	return fmt.Sprintf("database %s: schema is current (%d migrations)\n", m.Database, total)
}
