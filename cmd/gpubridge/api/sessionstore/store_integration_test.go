//go:build integration

package sessionstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve/store/storetest"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/sessionstore"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestSessions: a session is found by its id until it expires or is
// deleted; the table holds the id's hash only; expired rows go as new
// sessions are made.
func TestSessions(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	sc, err := storetest.New(ctx, env.DBDSN, "gpubridge_sessit")
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	now := time.Now().UTC().Truncate(time.Second)
	st := sessionstore.New(sc.DB).WithClock(func() time.Time { return now })
	person := sessionstore.Session{ID: "id-of-alice", CSRF: "csrf-a", Person: "alice", Expires: now.Add(time.Hour)}
	tok := sessionstore.Session{ID: "id-of-a-token", CSRF: "csrf-t", TokenHash: token.Hash{1, 2, 3}, Expires: now.Add(time.Minute)}
	for _, s := range []sessionstore.Session{person, tok} {
		if err := st.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		got, err := st.Get(ctx, s.ID)
		if err != nil || got != s {
			t.Errorf("get %s: %+v, %v; want %+v", s.ID, got, err, s)
		}
	}
	var leaks int
	if err := sc.DB.GetContext(ctx, &leaks, `SELECT COUNT(*) FROM portal_sessions WHERE id_hash = 'id-of-alice' OR csrf = 'id-of-alice'`); err != nil || leaks != 0 {
		t.Errorf("the id is stored: %d %v", leaks, err)
	}
	if _, err := st.Get(ctx, "nope"); !errors.Is(err, sessionstore.ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	// Two minutes on, the token's session has expired; a new sign-in
	// removes its row.
	now = now.Add(2 * time.Minute)
	if _, err := st.Get(ctx, tok.ID); !errors.Is(err, sessionstore.ErrNotFound) {
		t.Errorf("expired session: %v", err)
	}
	if err := st.Create(ctx, sessionstore.Session{ID: "id-2", CSRF: "c", Person: "bob", Expires: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := sc.DB.GetContext(ctx, &n, `SELECT COUNT(*) FROM portal_sessions`); err != nil || n != 2 {
		t.Errorf("rows after the clean-up: %d %v; want 2", n, err)
	}
	if err := st.Delete(ctx, person.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, person.ID); !errors.Is(err, sessionstore.ErrNotFound) {
		t.Errorf("deleted session: %v", err)
	}
}
