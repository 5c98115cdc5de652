//go:build integration

package store

import (
	"context"
	"testing"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/store/storetest"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestDBConformance runs the conformance suite on a scratch database of the
// testbed's MariaDB; each "process" is its own connection pool.
func TestDBConformance(t *testing.T) {
	conformance(t, func(t *testing.T) backend {
		e := testbed.Require(t)
		if e.DBDSN == "" {
			t.Fatal("GPUBRIDGE_DB_DSN is not set: `source .testbed/env`")
		}
		ctx := context.Background()
		sc, err := storetest.New(ctx, e.DBDSN, "gpubridge_bkstore")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sc.Close() })
		return backend{
			open: func(t *testing.T) reserve.Store {
				db, err := sqldb.Open(ctx, sc.DSN)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return New(db, "bkcluster")
			},
			audits: func(t *testing.T, kind string, id int64) []string {
				var out []string
				if err := sc.DB.SelectContext(ctx, &out, `SELECT action FROM audit_log WHERE object_kind = ? AND object_name = ? ORDER BY id`, kind, itoa(id)); err != nil {
					t.Fatal(err)
				}
				return out
			},
		}
	})
}
