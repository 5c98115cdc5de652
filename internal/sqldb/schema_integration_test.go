//go:build integration

package sqldb

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/internal/testbed"
)

// scratch creates an empty database of its own on the testbed's MariaDB
// and returns a pool on it; the database is dropped at the end.
func scratch(t *testing.T, tag string) *sqlx.DB {
	t.Helper()
	env := testbed.Require(t)
	ctx := context.Background()
	admin, err := Open(ctx, env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("gpubridge_dmn_%s_%06d", tag, rand.IntN(1e6))
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
		admin.Close()
	})
	cfg, err := mysql.ParseDSN(env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = name
	db, err := Open(ctx, cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func tables(t *testing.T, db *sqlx.DB) int {
	t.Helper()
	var n int
	if err := db.Get(&n, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()"); err != nil {
		t.Fatal(err)
	}
	return n
}

// An empty database is refused unless InitEmpty, and nothing is created
// by the refusal; with InitEmpty the schema is created and a second
// Prepare finds it current.
func TestPrepareEmptyDatabase(t *testing.T) {
	ctx := context.Background()
	db := scratch(t, "empty")
	s, err := Prepare(ctx, db, Policy{})
	if !errors.Is(err, ErrNoSchema) || s.Kind != Empty {
		t.Fatalf("Prepare without InitEmpty = %v, %v; want Empty, ErrNoSchema", s.Kind, err)
	}
	if n := tables(t, db); n != 0 {
		t.Fatalf("the refusal left %d tables; want none", n)
	}
	if _, err := Prepare(ctx, db, Policy{InitEmpty: true}); err != nil {
		t.Fatalf("Prepare with InitEmpty: %v", err)
	}
	s, err = Prepare(ctx, db, Policy{})
	if err != nil || s.Kind != Gpubridge || s.Pending != 0 {
		t.Fatalf("after init: %+v, %v; want a current gpubridge schema", s, err)
	}
}

// A database with someone else's tables is never migrated, not even with
// InitEmpty.
func TestPrepareForeignDatabase(t *testing.T) {
	ctx := context.Background()
	db := scratch(t, "foreign")
	if _, err := db.ExecContext(ctx, "CREATE TABLE orders (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	s, err := Prepare(ctx, db, Policy{InitEmpty: true})
	if !errors.Is(err, ErrForeignSchema) || s.Kind != Foreign {
		t.Fatalf("Prepare = %v, %v; want Foreign, ErrForeignSchema", s.Kind, err)
	}
	if n := tables(t, db); n != 1 {
		t.Fatalf("%d tables after the refusal; want only orders", n)
	}
}

// A gpubridge schema behind this build gets its pending migrations.
func TestPrepareBehind(t *testing.T) {
	ctx := context.Background()
	db := scratch(t, "behind")
	if err := Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	// Forget one migration, as if it had not run yet (00001 creates its
	// table IF NOT EXISTS, so running it again is harmless).
	if _, err := db.ExecContext(ctx, "DELETE FROM "+versionTable+" WHERE version_id = 1"); err != nil {
		t.Fatal(err)
	}
	s, err := Inspect(ctx, db)
	if err != nil || s.Kind != Gpubridge || s.Pending != 1 {
		t.Fatalf("Inspect = %+v, %v; want gpubridge with 1 pending", s, err)
	}
	if _, err := Prepare(ctx, db, Policy{}); err != nil {
		t.Fatal(err)
	}
	if s, _ := Inspect(ctx, db); s.Pending != 0 {
		t.Fatalf("after Prepare: %d pending; want 0", s.Pending)
	}
}

// Several processes prepare one empty database at once (`gpubridge
// migrate` beside `serve --init`, two replicas started together): each
// succeeds, and the schema is whole and current. goose takes no lock on
// MySQL, so without migrateBeside the ones that lose a race fail with a
// duplicate table or column.
func TestPrepareConcurrently(t *testing.T) {
	ctx := context.Background()
	for round := range 3 {
		db := scratch(t, fmt.Sprintf("conc%d", round))
		var name string
		if err := db.GetContext(ctx, &name, "SELECT DATABASE()"); err != nil {
			t.Fatal(err)
		}
		env := testbed.Require(t)
		cfg, err := mysql.ParseDSN(env.DBDSN)
		if err != nil {
			t.Fatal(err)
		}
		cfg.DBName = name
		errs := make(chan error, 4)
		for range cap(errs) {
			go func() {
				p, err := Open(ctx, cfg.FormatDSN()) // a process of its own
				if err != nil {
					errs <- err
					return
				}
				defer p.Close()
				_, err = Prepare(ctx, p, Policy{InitEmpty: true})
				errs <- err
			}()
		}
		for range cap(errs) {
			if err := <-errs; err != nil {
				t.Errorf("round %d: a concurrent Prepare failed: %v", round, err)
			}
		}
		if s, ok := current(ctx, db); !ok || s.Pending != 0 {
			t.Fatalf("round %d: schema after the concurrent Prepares: %+v, current %v", round, s, ok)
		}
	}
}
