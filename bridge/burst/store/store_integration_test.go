//go:build integration

package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/internal/lease"
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

// A move recorded by a leader whose lease another replica took over is
// refused (lease.ErrFenced) and not stored: a paused, deposed leader
// cannot record a move twice beside the new leader's.
func TestRecordMovesFenced(t *testing.T) {
	e := testbed.Require(t)
	ctx := context.Background()
	db, err := sqldb.OpenMigrated(ctx, e.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	cluster := fmt.Sprintf("b5fence%d", time.Now().UnixNano()%1e9)
	name := "gpubridge.leader." + cluster
	t.Cleanup(func() {
		db.ExecContext(ctx, `DELETE FROM burst_moves WHERE cluster = ?`, cluster)
		db.ExecContext(ctx, `DELETE FROM leases WHERE name = ?`, name)
		db.Close()
	})
	l := lease.New(db.DB, name, lease.Options{Info: "test leader", TTL: time.Minute})
	if err := l.Take(ctx); err != nil {
		t.Fatal(err)
	}
	jobCtx := lease.NewContext(ctx, l.Token())
	st := New(db, cluster)
	at := time.Now().UTC().Truncate(time.Second)
	move := func(id int64) []burst.MoveRecord {
		return []burst.MoveRecord{{JobID: id, Tenant: "t", User: "u", GPUs: "h100:1", GPUCount: 1, MovedAt: at}}
	}
	if n, err := st.RecordMoves(jobCtx, at, move(1)); err != nil || n != 1 {
		t.Fatalf("the leader's move: %d, %v", n, err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE leases SET holder = 'another replica', epoch = epoch + 1 WHERE name = ?`, name); err != nil {
		t.Fatal(err)
	}
	if n, err := st.RecordMoves(jobCtx, at, move(2)); !errors.Is(err, lease.ErrFenced) || n != 0 {
		t.Fatalf("the deposed leader's move: %d, %v; want lease.ErrFenced", n, err)
	}
	ms, err := st.Moves(ctx, "", time.Time{})
	if err != nil || len(ms) != 1 || ms[0].JobID != 1 {
		t.Fatalf("stored moves %+v, %v; want only job 1's", ms, err)
	}
}
