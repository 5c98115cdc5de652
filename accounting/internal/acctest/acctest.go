// Package acctest helps the accounting integration tests: scratch copies of
// gpubridge's database on the testbed's MariaDB. Only tests import it.
package acctest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

var nonWord = regexp.MustCompile(`[^a-z0-9]+`)

// ScratchDB creates an empty, migrated database named gpubridge_m4_<name>_<random>
// (the testbed's gpubridge user may create gpubridge_* databases), and drops it
// when the test ends. It returns the handle and its DSN.
func ScratchDB(t testing.TB, env testbed.Env, name string) (*sqlx.DB, string) {
	t.Helper()
	if env.DBDSN == "" {
		t.Fatal("GPUBRIDGE_DB_DSN is not set: `source .testbed/env` after `make testbed-up`")
	}
	cfg, err := mysql.ParseDSN(env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	dbName := fmt.Sprintf("gpubridge_m4_%s_%06d", strings.Trim(nonWord.ReplaceAllString(strings.ToLower(name), "_"), "_"), rand.IntN(1e6))
	if len(dbName) > 64 {
		dbName = dbName[:64]
	}
	ctx := context.Background()
	admin, err := sqldb.Open(ctx, env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+dbName+"`"); err != nil {
		t.Fatalf("create scratch database: %v", err)
	}
	cfg.DBName = dbName
	dsn := cfg.FormatDSN()
	db, err := sqldb.OpenMigrated(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		admin, err := sqldb.Open(context.Background(), env.DBDSN)
		if err != nil {
			t.Errorf("drop scratch database: %v", err)
			return
		}
		defer admin.Close()
		if _, err := admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS `"+dbName+"`"); err != nil {
			t.Errorf("drop scratch database: %v", err)
		}
	})
	return db, dsn
}
