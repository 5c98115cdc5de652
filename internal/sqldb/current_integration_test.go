//go:build integration

package sqldb

import (
	"context"
	"testing"
)

// TestCurrentFastPath: a database with every migration applied is found
// current with one query (Prepare's fast path, what each command pays at
// start); a missing goose table, a pending migration or another database
// go the whole way through Inspect.
func TestCurrentFastPath(t *testing.T) {
	ctx := context.Background()
	db := scratch(t, "current")
	if _, ok := current(ctx, db); ok {
		t.Fatal("an empty database is current")
	}
	if err := Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	s, ok := current(ctx, db)
	ours, _ := versions()
	if !ok || s.Kind != Gpubridge || s.Applied != len(ours) || s.Pending != 0 || s.Database == "" {
		t.Fatalf("current = %+v, %v; want gpubridge, %d applied, the database named", s, ok, len(ours))
	}
	if _, err := db.ExecContext(ctx, "DELETE FROM "+versionTable+" WHERE version_id = 1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := current(ctx, db); ok {
		t.Fatal("a database with a pending migration is current")
	}
	if s, err := Prepare(ctx, db, Policy{}); err != nil || s.Pending != 1 {
		t.Fatalf("Prepare = %+v, %v; want the full check with 1 pending", s, err)
	}
	if _, ok := current(ctx, db); !ok {
		t.Fatal("not current after Prepare applied the pending migration")
	}
}
