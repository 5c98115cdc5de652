package lease

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"
)

func TestTiming(t *testing.T) {
	cases := map[string]struct {
		ttl             time.Duration
		every, deadline time.Duration
	}{
		"leader default": {ttl: 3 * time.Second, every: 750 * time.Millisecond, deadline: 2 * time.Second},
		"writer default": {ttl: 15 * time.Second, every: 3750 * time.Millisecond, deadline: 10 * time.Second},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := [2]time.Duration{RenewEvery(c.ttl), RenewDeadline(c.ttl)}
			if d := cmp.Diff([2]time.Duration{c.every, c.deadline}, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
			// Two renewals fit before the deadline (one may fail), and the
			// deadline comes before the expiry in the database.
			if 2*got[0] >= got[1] || got[1] >= c.ttl {
				t.Errorf("every %s, deadline %s, ttl %s", got[0], got[1], c.ttl)
			}
		})
	}
}

func TestRetryable(t *testing.T) {
	cases := map[string]struct {
		err  error
		want bool
	}{
		"certification failure": {&mysql.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock"}, true},
		"lock wait timeout":     {&mysql.MySQLError{Number: 1205}, true},
		"concurrent insert":     {fmt.Errorf("x: %w", &mysql.MySQLError{Number: 1062}), true},
		"node not ready":        {&mysql.MySQLError{Number: 1047, Message: "WSREP has not yet prepared node for application use"}, true},
		"raced":                 {errRaced, true},
		"GET_LOCK refused":      {&mysql.MySQLError{Number: 1235}, false},
		"held":                  {&HeldError{Name: "n"}, false},
		"no rows":               {sql.ErrNoRows, false},
		"nil":                   {nil, false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Retryable(c.err); got != c.want {
				t.Errorf("Retryable(%v) = %v", c.err, got)
			}
		})
	}
}

func TestHeldError(t *testing.T) {
	err := error(&HeldError{Name: "gpubridge-writer:c", Holder: Holder{Info: "gpubridge apply by alice", Epoch: 7,
		Since: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC), Left: 1500 * time.Millisecond}})
	if !errors.Is(err, ErrHeld) {
		t.Error("not ErrHeld")
	}
	want := "lease gpubridge-writer:c is held by gpubridge apply by alice since 2026-12-02T10:00:00Z (epoch 7, expires in 1.5s unless renewed)"
	if err.Error() != want {
		t.Errorf("got  %s\nwant %s", err, want)
	}
}

func TestHolderIDsDiffer(t *testing.T) {
	a, b := New(nil, "n", Options{}), New(nil, "n", Options{})
	if a.holder == b.holder || len(a.holder) > 96 {
		t.Errorf("holders %q, %q", a.holder, b.holder)
	}
	if got := truncate("ab\u00e9", 3); got != "ab" {
		t.Errorf("truncate cut a rune: %q", got)
	}
}

// panicExec fails the test if a fence reaches the database.
type panicExec struct{ t *testing.T }

func (p panicExec) ExecContext(context.Context, string, ...any) (sql.Result, error) {
	p.t.Fatal("a fence that must be refused locally ran SQL")
	return nil, nil
}

// A holder whose renew deadline passed, or a token of an earlier epoch,
// is refused before any SQL, and each refusal is counted.
func TestFenceRefusedLocally(t *testing.T) {
	now := time.Unix(1000, 0)
	l := New(nil, "gpubridge.leader.c", Options{TTL: 3 * time.Second})
	l.now = func() time.Time { return now }
	l.granted(4, now)
	stale := l.Token()
	l.granted(5, now) // taken again: a new epoch
	cases := map[string]struct {
		tok     Token
		advance time.Duration
	}{
		"never held":      {tok: New(nil, "x", Options{}).Token()},
		"earlier epoch":   {tok: stale},
		"deadline passed": {tok: l.Token(), advance: 2 * time.Second},
		"long after":      {tok: l.Token(), advance: time.Hour},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			now = time.Unix(1000, 0).Add(c.advance)
			before := Fenced()
			err := c.tok.Fence(context.Background(), panicExec{t})
			if !errors.Is(err, ErrFenced) {
				t.Fatalf("Fence = %v, want ErrFenced", err)
			}
			if Fenced() != before+1 {
				t.Errorf("Fenced() = %d, want %d", Fenced(), before+1)
			}
		})
	}
}

// recordExec answers every fence with rows affected n.
type recordExec struct {
	n     int64
	calls []string
}

func (r *recordExec) ExecContext(_ context.Context, q string, args ...any) (sql.Result, error) {
	r.calls = append(r.calls, fmt.Sprint(strings.Fields(q)[0:2], args))
	return driverResult(r.n), nil
}

type driverResult int64

func (d driverResult) LastInsertId() (int64, error) { return 0, nil }
func (d driverResult) RowsAffected() (int64, error) { return int64(d), nil }

// FenceContext fences with every token a context carries, in order, and
// a row that does not match (0 rows affected) is a refusal.
func TestFenceContext(t *testing.T) {
	now := time.Unix(1000, 0)
	a := New(nil, "a", Options{TTL: time.Minute})
	b := New(nil, "b", Options{TTL: time.Minute})
	for _, l := range []*Lease{a, b} {
		l.now = func() time.Time { return now }
		l.granted(2, now)
	}
	ctx := NewContext(NewContext(context.Background(), a.Token()), b.Token())
	ok := &recordExec{n: 1}
	if err := FenceContext(ctx, ok); err != nil {
		t.Fatal(err)
	}
	want := []string{
		fmt.Sprint([]string{"UPDATE", "leases"}, []any{"a", a.holder, int64(2)}),
		fmt.Sprint([]string{"UPDATE", "leases"}, []any{"b", b.holder, int64(2)}),
	}
	if d := cmp.Diff(want, ok.calls); d != "" {
		t.Errorf("fences (-want +got)\n%s", d)
	}
	if err := FenceContext(ctx, &recordExec{n: 0}); !errors.Is(err, ErrFenced) {
		t.Errorf("a lease row that does not match: %v, want ErrFenced", err)
	}
	if err := FenceContext(context.Background(), panicExec{t}); err != nil {
		t.Errorf("no tokens: %v", err)
	}
}
