//go:build integration

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestInitDBOnMariaDB runs init-db's SQL on the testbed's MariaDB (as its
// root, over the socket, as `gpubridge init-db | sudo mariadb` does), twice,
// for users and a database of this test's own, and checks what they may
// do: the store user everything in its database and nothing in
// slurm_acct_db, the read-only user SELECT on slurm_acct_db and no write.
func TestInitDBOnMariaDB(t *testing.T) {
	env := testbed.Require(t)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	sfx := hex.EncodeToString(b)
	user, ro, db := "gbsite_"+sfx, "gbsitero_"+sfx, "gbsitedb_"+sfx
	storeDSN := fmt.Sprintf("%s:pw-%s@tcp(127.0.0.1:3306)/%s?parseTime=true&loc=UTC", user, sfx, db)
	roDSN := fmt.Sprintf("%s:ro-%s@tcp(127.0.0.1:3306)/slurm_acct_db?parseTime=true&loc=UTC", ro, sfx)
	ctx := context.Background()
	cleanup := func() {
		var drop []string
		for _, u := range []string{user, ro} {
			for _, h := range []string{"localhost", "127.0.0.1"} {
				drop = append(drop, fmt.Sprintf("DROP USER IF EXISTS '%s'@'%s';", u, h))
			}
		}
		drop = append(drop, "DROP DATABASE IF EXISTS `"+db+"`;")
		if out, err := env.Run(ctx, "", []byte(strings.Join(drop, "\n")), "mariadb"); err != nil {
			t.Errorf("cleanup: %v %s", err, out)
		}
	}
	cleanup()
	t.Cleanup(cleanup)

	code, sql, errw := siteRun(t, storeDSN, roDSN, "init-db")
	if code != 0 {
		t.Fatalf("init-db: exit %d: %s", code, errw)
	}
	t.Logf("init-db:\n%s", sql)
	for i := range 2 {
		if out, err := env.Run(ctx, "", []byte(sql), "mariadb"); err != nil {
			t.Fatalf("mariadb < init-db's SQL (run %d): %v %s", i+1, err, out)
		}
	}

	store := sqlx.MustOpen("mysql", storeDSN)
	defer store.Close()
	for _, q := range []string{"CREATE TABLE t (x INT)", "INSERT INTO t VALUES (1)", "ALTER TABLE t ADD COLUMN y INT", "DROP TABLE t"} {
		if _, err := store.ExecContext(ctx, q); err != nil {
			t.Errorf("store user: %s: %v", q, err)
		}
	}
	var n int
	if err := store.GetContext(ctx, &n, "SELECT COUNT(*) FROM slurm_acct_db.tres_table"); err == nil || !strings.Contains(err.Error(), "1142") {
		t.Errorf("store user reads slurm_acct_db: %v; want error 1142 (denied)", err)
	}

	rdb := sqlx.MustOpen("mysql", roDSN)
	defer rdb.Close()
	if err := rdb.GetContext(ctx, &n, "SELECT COUNT(*) FROM tres_table"); err != nil || n == 0 {
		t.Errorf("read-only user: SELECT COUNT(*) FROM tres_table = %d, %v", n, err)
	}
	if _, err := rdb.ExecContext(ctx, "UPDATE tres_table SET id = id WHERE 1 = 0"); err == nil || !strings.Contains(err.Error(), "1142") {
		t.Errorf("read-only user UPDATE: %v; want error 1142 (denied)", err)
	}
	var grants []string
	if err := rdb.SelectContext(ctx, &grants, "SHOW GRANTS"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		fmt.Sprintf("GRANT USAGE ON *.* TO `%s`@`127.0.0.1` IDENTIFIED BY PASSWORD", ro),
		fmt.Sprintf("GRANT SELECT ON `slurm_acct_db`.* TO `%s`@`127.0.0.1`", ro),
	}
	if len(grants) != 2 || !strings.HasPrefix(grants[0], want[0]) || grants[1] != want[1] {
		t.Errorf("read-only user's grants %q, want %q", grants, want)
	}
	if slices.ContainsFunc(grants, func(g string) bool { return strings.Contains(g, "ALL") }) {
		t.Errorf("read-only user has ALL: %q", grants)
	}
}
