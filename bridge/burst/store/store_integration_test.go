//go:build integration

package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

func openStore(t *testing.T) conformer {
	t.Helper()
	e := testbed.Require(t)
	if e.DBDSN == "" {
		t.Fatal("GPUBRIDGE_DB_DSN is not set: `source .testbed/env`")
	}
	ctx := context.Background()
	db, err := sqldb.OpenMigrated(ctx, e.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	cluster := fmt.Sprintf("b5store%d", time.Now().UnixNano()%1e9)
	t.Cleanup(func() {
		db.ExecContext(ctx, `DELETE FROM burst_moves WHERE cluster = ?`, cluster)
		db.ExecContext(ctx, `DELETE FROM burst_refusals WHERE cluster = ?`, cluster)
		db.Close()
	})
	return New(db, cluster)
}

func TestDBConformance(t *testing.T) { conformance(t, openStore) }
