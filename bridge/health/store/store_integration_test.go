//go:build integration

package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

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

// conflictOnce fails the first commit under the returned context with a
// Galera certification conflict (1213), running between (when not nil)
// once that attempt is rolled back; it counts the commits tried.
func conflictOnce(ctx context.Context, between func()) (context.Context, *int) {
	calls := 0
	return sqldb.WithCommitFault(ctx, func() error {
		calls++
		if calls == 1 {
			return &mysql.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock; try restarting transaction"}
		}
		return nil
	}, between), &calls
}

// TestFinishRunRetried: FinishRun's transaction may run twice (sqldb.WithTx
// retries a conflict). An attempt that won the run and was then rolled
// back must not make FinishRun claim a run that another process finished
// in between; without that process, the retry wins it, once.
func TestFinishRunRetried(t *testing.T) {
	s := openDB(t)
	ctx := context.Background()
	create := func() health.Run {
		r, err := s.CreateRun(ctx, health.Run{Key: uniqKey(), Node: "gpu-a", Checks: []string{"xid"}, Purpose: health.PurposeTenant,
			Tenant: "acme", Actor: "alice", RequestedAt: t0})
		if err != nil {
			t.Fatal(err)
		}
		r.State, r.FinishedAt = health.RunDone, t0.Add(time.Minute)
		return r
	}

	r := create()
	fctx, calls := conflictOnce(ctx, func() {
		other := r
		other.Note = "finished by the other process"
		if won, err := s.FinishRun(ctx, health.Finish{Run: other}); err != nil || !won {
			t.Errorf("the other process's FinishRun = %v, %v; want won", won, err)
		}
	})
	won, err := s.FinishRun(fctx, health.Finish{Run: r})
	if err != nil || won || *calls != 2 {
		t.Errorf("FinishRun, finished by another process between its attempts = %v, %v after %d commits; want not won, 2 commits", won, err, *calls)
	}

	r = create()
	fctx, calls = conflictOnce(ctx, nil)
	if won, err := s.FinishRun(fctx, health.Finish{Run: r}); err != nil || !won || *calls != 2 {
		t.Errorf("FinishRun, retried after a conflict = %v, %v after %d commits; want won, 2 commits", won, err, *calls)
	}
	inflight, err := s.InFlight(ctx)
	if err != nil || len(inflight) != 0 {
		t.Errorf("InFlight = %+v, %v; want none", inflight, err)
	}
}
