//go:build integration

package daemon

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/gpubridge/gpubridge/internal/lease"
	"github.com/gpubridge/gpubridge/internal/lease/leasetest"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
	"github.com/gpubridge/gpubridge/internal/writerlock"
)

// refusingPool is a pool on the testbed's gpubridge database that
// refuses every MariaDB user-lock function with 1235, as Galera does.
func refusingPool(t *testing.T) *sql.DB {
	t.Helper()
	env := testbed.Require(t)
	ctx := context.Background()
	m, err := sqldb.OpenMigrated(ctx, env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	db, err := leasetest.Open(ctx, env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// The pool does refuse them: this test proves something.
	var got sql.NullInt64
	var me *mysql.MySQLError
	if err := db.QueryRowContext(ctx, "SELECT GET_LOCK('gpubridge.test', 0)").Scan(&got); !errors.As(err, &me) || me.Number != 1235 {
		t.Fatalf("GET_LOCK through the refusing pool: %v; want error 1235", err)
	}
	return db.DB
}

// TestNoUserLocks runs the leader election, its renewals, the jobs'
// fenced writes and the writer lock (taken, waited for, released) on
// pools that refuse GET_LOCK, RELEASE_LOCK and IS_USED_LOCK: all work,
// and no statement was refused. (The ledger lock's run is
// accounting/ledger's TestMariaDBConformanceWithoutUserLocks.)
func TestNoUserLocks(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dbA, dbB := refusingPool(t), refusingPool(t)
	refused := leasetest.Refused.Load()
	cluster := fmt.Sprintf("test-nolocks-%06d", rand.IntN(1e6))

	// The leader: one of two replicas leads, its job's fenced write
	// passes; the other stays standby.
	runs := make(chan error, 4)
	var done []chan struct{}
	for _, db := range []*sql.DB{dbA, dbB} {
		l := NewLeader(func(context.Context) (*sql.DB, error) { return db, nil },
			func(context.Context) (string, error) { return cluster, nil }, time.Second, quiet())
		s, err := NewScheduler([]Scheduled{{Spec: "@every 1h", Job: Func("fenced", func(ctx context.Context) error {
			runs <- fenceCtx(ctx, db)
			<-ctx.Done()
			return nil
		})}}, quiet(), nil)
		if err != nil {
			t.Fatal(err)
		}
		d := make(chan struct{})
		done = append(done, d)
		go func() { _ = RunWhileLeader(ctx, l, s, nil, 100*time.Millisecond, quiet()); close(d) }()
	}
	select {
	case err := <-runs:
		if err != nil {
			t.Fatalf("the leader's fenced write: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no replica led within 5 s")
	}
	time.Sleep(1500 * time.Millisecond) // renewals past the 1 s TTL; the standby stays so
	select {
	case err := <-runs:
		t.Fatalf("a second replica ran the job while the first leads (%v)", err)
	default:
	}

	// The writer lock: A takes it, B waits and gives up naming A, then
	// takes it once A released it.
	a := &writerlock.Lock{DB: dbA, Cluster: cluster, Holder: "writer A", Wait: time.Second}
	b := &writerlock.Lock{DB: dbB, Cluster: cluster, Holder: "writer B", Wait: 300 * time.Millisecond}
	ra, err := a.Acquire(ctx)
	if err != nil {
		t.Fatalf("writer A: %v", err)
	}
	if _, err := b.Acquire(ctx); !errors.Is(err, writerlock.ErrBusy) {
		t.Fatalf("writer B while A holds: %v; want ErrBusy", err)
	}
	ra()
	rb, err := b.Acquire(ctx)
	if err != nil {
		t.Fatalf("writer B after A released: %v", err)
	}
	rb()

	cancel()
	for _, d := range done {
		<-d
	}
	if n := leasetest.Refused.Load() - refused; n != 0 {
		t.Errorf("%d statements used a user lock", n)
	}
}

// fenceCtx is a write transaction that fences with the tokens of ctx.
func fenceCtx(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if len(lease.Tokens(ctx)) != 1 {
		return fmt.Errorf("the job's context carries %d lease tokens; want the leader's", len(lease.Tokens(ctx)))
	}
	if err := lease.FenceContext(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}
