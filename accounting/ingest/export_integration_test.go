//go:build integration

package ingest

import (
	"context"
	"database/sql"
	"fmt"
)

// CheckRollups runs the purge check over the whole hours of [from, to) as
// if slurmdbd's own rollups had reached to (a test's bounded `sacctmgr
// rollup` leaves last_ran_table, and so the hours checked, alone).
func CheckRollups(ctx context.Context, s *SlurmDB, from, to int64) ([]Missing, error) {
	tx, err := s.db.BeginTxx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	lk, err := s.loadLookups(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("slurm_acct_db: %w", err)
	}
	return s.missingRowsUpTo(ctx, tx, lk, from, to, to)
}
