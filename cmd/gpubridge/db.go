package main

import (
	"context"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// DB opens gpubridge's own database, migrated, once per process.
func (a *App) DB(ctx context.Context) (*sqlx.DB, error) {
	if a.db != nil {
		return a.db, nil
	}
	c, err := a.Config()
	if err != nil {
		return nil, err
	}
	if err := c.RequireDatabase(); err != nil {
		return nil, err
	}
	db, err := sqldb.OpenMigrated(ctx, c.Database.DSN)
	if err != nil {
		return nil, err
	}
	a.db = db
	return db, nil
}
