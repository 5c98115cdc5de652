//go:build integration

package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// openDB opens the store on the testbed's gpubridge database under a
// cluster name of its own, removed at the end.
func openDB(t *testing.T) health.Store {
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
	cluster := fmt.Sprintf("hstore%d", time.Now().UnixNano()%1e9)
	t.Cleanup(func() {
		for _, tbl := range []string{"health_nodes", "health_runs", "health_results", "health_events", "health_tenant_checks"} {
			db.ExecContext(ctx, `DELETE FROM `+tbl+` WHERE cluster = ?`, cluster)
		}
		db.ExecContext(ctx, `DELETE FROM audit_log WHERE object_kind = 'node' AND object_name LIKE ?`, cluster+"/%")
		db.Close()
	})
	return New(db, cluster)
}

func TestDBConformance(t *testing.T) { conformance(t, openDB) }
