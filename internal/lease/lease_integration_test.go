//go:build integration

package lease_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/internal/lease"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// pools opens n pools of their own on the testbed's gpubridge database
// (as n processes would) and a lease name of this run.
func pools(t *testing.T, n int) ([]*sql.DB, string) {
	t.Helper()
	env := testbed.Require(t)
	var dbs []*sql.DB
	for i := range n {
		open := sqldb.Open
		if i == 0 {
			open = sqldb.OpenMigrated
		}
		db, err := open(context.Background(), env.DBDSN)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs = append(dbs, db.DB)
	}
	return dbs, fmt.Sprintf("test.%s.%06d", t.Name(), rand.IntN(1e6))
}

// epochOf reads the lease row's epoch.
func epochOf(t *testing.T, db *sql.DB, name string) int64 {
	t.Helper()
	var e int64
	if err := db.QueryRow(`SELECT epoch FROM leases WHERE name = ?`, name).Scan(&e); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestLeaseRace: eight takers on eight pools take one free lease at the
// same instant, ten rounds: exactly one wins each round, the others get
// ErrHeld, and the epoch grows by one per round.
func TestLeaseRace(t *testing.T) {
	dbs, name := pools(t, 8)
	ctx := context.Background()
	for round := range 10 {
		var ls []*lease.Lease
		for i, db := range dbs {
			ls = append(ls, lease.New(db, name, lease.Options{Info: fmt.Sprintf("taker %d", i), TTL: 10 * time.Second}))
		}
		errs := make([]error, len(ls))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, l := range ls {
			wg.Go(func() { <-start; errs[i] = l.Take(ctx) })
		}
		close(start)
		wg.Wait()
		var won []int
		for i, err := range errs {
			switch {
			case err == nil:
				won = append(won, i)
			case !errors.Is(err, lease.ErrHeld):
				t.Errorf("round %d, taker %d: %v", round, i, err)
			}
		}
		if len(won) != 1 {
			t.Fatalf("round %d: %d winners %v; want exactly one", round, len(won), won)
		}
		if got := epochOf(t, dbs[0], name); got != int64(round+1) || ls[won[0]].Epoch() != got {
			t.Errorf("round %d: epoch %d in the row, %d held; want %d", round, got, ls[won[0]].Epoch(), round+1)
		}
		if err := ls[won[0]].Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLeaseExpiryAndTakeover: a holder that stops renewing (a paused or
// dead process) loses the lease at its TTL; another takes it with a
// greater epoch; the old holder's renewal then fails with ErrLost and its
// fenced write is refused, its transaction writing nothing.
func TestLeaseExpiryAndTakeover(t *testing.T) {
	dbs, name := pools(t, 2)
	ctx := context.Background()
	old := lease.New(dbs[0], name, lease.Options{Info: "old", TTL: time.Second})
	next := lease.New(dbs[1], name, lease.Options{Info: "next", TTL: time.Second})
	if err := old.Take(ctx); err != nil {
		t.Fatal(err)
	}
	stale := old.Token()
	var held *lease.HeldError
	if err := next.Take(ctx); !errors.As(err, &held) || held.Holder.Info != "old" || held.Holder.Left <= 0 {
		t.Fatalf("take while held: %v", err)
	}
	time.Sleep(1100 * time.Millisecond) // past the TTL, nobody renewed
	if old.Valid() {
		t.Error("the old holder still counts its lease valid past its renew deadline")
	}
	if err := next.Take(ctx); err != nil {
		t.Fatalf("take after expiry: %v", err)
	}
	if next.Epoch() != stale.Epoch()+1 {
		t.Errorf("epoch after takeover %d, before %d", next.Epoch(), stale.Epoch())
	}
	if err := old.Renew(ctx); !errors.Is(err, lease.ErrLost) {
		t.Errorf("old holder's renewal after takeover: %v, want ErrLost", err)
	}
	// The stale holder's fenced write (refused locally: its renewal found
	// the lease lost; TestLeaseFencedInTheDatabase has the database's
	// refusal).
	refused := lease.Fenced()
	err := writeFenced(ctx, dbs[0], stale, name)
	if !errors.Is(err, lease.ErrFenced) || lease.Fenced() != refused+1 {
		t.Fatalf("stale holder's fenced write: %v (refusals %d -> %d)", err, refused, lease.Fenced())
	}
	if err := writeFenced(ctx, dbs[1], next.Token(), name); err != nil {
		t.Fatalf("the new holder's fenced write: %v", err)
	}
	var n int
	if err := dbs[0].QueryRow(`SELECT fences FROM leases WHERE name = ?`, name).Scan(&n); err != nil || n != 1 {
		t.Errorf("fences = %d (%v); want 1: the refused write left nothing", n, err)
	}
}

// writeFenced is a write transaction that fences with tok first.
func writeFenced(ctx context.Context, db *sql.DB, tok lease.Token, name string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := tok.Fence(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}

// TestLeaseFencedInTheDatabase: a holder whose lease was taken over while
// its local deadline had not yet passed (the database's view wins) is
// refused by the row itself.
func TestLeaseFencedInTheDatabase(t *testing.T) {
	dbs, name := pools(t, 1)
	ctx := context.Background()
	var logged bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logged, nil)).With("component", "leader")
	a := lease.New(dbs[0], name, lease.Options{Info: "gpubridge serve (pid 4242 on head1)", TTL: time.Minute, Logger: logger})
	if err := a.Take(ctx); err != nil {
		t.Fatal(err)
	}
	// Another holder takes over behind a's back (an operator, or a
	// database whose clock jumped).
	if _, err := dbs[0].Exec(`UPDATE leases SET holder = 'someone-else', epoch = epoch + 1 WHERE name = ?`, name); err != nil {
		t.Fatal(err)
	}
	if !a.Valid() {
		t.Fatal("a's local deadline passed already")
	}
	err := writeFenced(ctx, dbs[0], a.Token(), name)
	if !errors.Is(err, lease.ErrFenced) {
		t.Fatalf("fenced write after a takeover: %v, want ErrFenced", err)
	}
	t.Logf("error: %v", err)
	t.Logf("log: %s", logged.String())
	for _, want := range []string{`level=WARN msg="fenced write refused"`, "lease=" + name, `holder="gpubridge serve (pid 4242 on head1)"`} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("the refusal's log line lacks %s:\n%s", want, logged.String())
		}
	}
}

// TestLeaseKeepAndRelease: Keep renews past several TTLs; a taker that
// waits gets the lease as soon as it is released, not at its expiry.
func TestLeaseKeepAndRelease(t *testing.T) {
	dbs, name := pools(t, 2)
	ctx := context.Background()
	a := lease.New(dbs[0], name, lease.Options{Info: "a", TTL: 400 * time.Millisecond})
	b := lease.New(dbs[1], name, lease.Options{Info: "b", TTL: 400 * time.Millisecond})
	if err := a.Take(ctx); err != nil {
		t.Fatal(err)
	}
	lost := make(chan error, 1)
	stop := a.Keep(func(err error) { lost <- err })
	var waited []lease.Holder
	err := b.TakeWithin(ctx, 1500*time.Millisecond, func(h lease.Holder, _ time.Duration) { waited = append(waited, h) })
	if !errors.Is(err, lease.ErrHeld) || len(waited) != 1 || waited[0].Info != "a" {
		t.Fatalf("b while a keeps its lease: %v, waited %v", err, waited)
	}
	select {
	case err := <-lost:
		t.Fatalf("a lost its kept lease: %v", err)
	default:
	}
	stop()
	done := make(chan error, 1)
	go func() { done <- b.TakeWithin(ctx, 10*time.Second, nil) }()
	time.Sleep(50 * time.Millisecond)
	t0 := time.Now()
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("b after a released: %v", err)
	}
	if d := time.Since(t0); d > 300*time.Millisecond {
		t.Errorf("b took the released lease after %s", d)
	}
}

// TestLeaseKeepReportsLoss: a kept lease taken over is reported lost
// within a renewal interval.
func TestLeaseKeepReportsLoss(t *testing.T) {
	dbs, name := pools(t, 1)
	ctx := context.Background()
	a := lease.New(dbs[0], name, lease.Options{Info: "a", TTL: 400 * time.Millisecond})
	if err := a.Take(ctx); err != nil {
		t.Fatal(err)
	}
	lost := make(chan error, 1)
	stop := a.Keep(func(err error) { lost <- err })
	defer stop()
	if _, err := dbs[0].Exec(`UPDATE leases SET holder = 'someone-else', epoch = epoch + 1 WHERE name = ?`, name); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-lost:
		if !errors.Is(err, lease.ErrLost) || a.Valid() {
			t.Errorf("lost with %v (valid %v)", err, a.Valid())
		}
	case <-time.After(time.Second):
		t.Fatal("Keep did not report the lost lease within 1 s")
	}
}

// TestWithTxFences: every sqldb.WithTx under a context carrying a lease
// token fences with it before the commit (the daemon's jobs carry the
// leader's): the store writes of a leader that lost its lease are refused
// and roll back, those of the holder commit.
func TestWithTxFences(t *testing.T) {
	dbs, name := pools(t, 1)
	ctx := context.Background()
	db := sqlx.NewDb(dbs[0], "mysql")
	a := lease.New(dbs[0], name, lease.Options{Info: "a", TTL: time.Minute})
	if err := a.Take(ctx); err != nil {
		t.Fatal(err)
	}
	jobCtx := lease.NewContext(ctx, a.Token())
	write := func(probe string) error {
		return sqldb.WithTx(jobCtx, db, func(tx *sqlx.Tx) error {
			_, err := tx.ExecContext(jobCtx, `INSERT INTO leases (name, holder, info, epoch, taken_at, renewed_at, expires_at)
				VALUES (?, 'probe', 'probe', 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`, probe)
			return err
		})
	}
	exists := func(probe string) bool {
		var n int
		if err := db.Get(&n, `SELECT COUNT(*) FROM leases WHERE name = ?`, probe); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	if err := write(name + ".held"); err != nil || !exists(name+".held") {
		t.Fatalf("the holder's write: %v", err)
	}
	if _, err := db.Exec(`UPDATE leases SET holder = 'other', epoch = epoch + 1 WHERE name = ?`, name); err != nil {
		t.Fatal(err)
	}
	if err := write(name + ".lost"); !errors.Is(err, lease.ErrFenced) || exists(name+".lost") {
		t.Fatalf("the write after the lease was lost: %v (committed: %v); want ErrFenced, nothing", err, exists(name+".lost"))
	}
}
