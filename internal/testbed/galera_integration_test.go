//go:build integration

package testbed_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// The testbed's Galera cluster is a real one: three nodes, each Synced in a
// cluster of 3; a row written through one node is read through another;
// user locks are refused as Galera refuses them (error 1235, MDEV-30473:
// the reason gpubridge's locks are lease rows); and gpubridge's schema
// migrates on it with a primary key on every table (Galera replicates
// row by row by key).
func TestGaleraCluster(t *testing.T) {
	_, dsns := testbed.RequireGalera(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := fmt.Sprintf("gpubridge_galera%d_%d", os.Getpid()%100000, time.Now().UnixNano()%1000000)
	nodes := make([]*sqlx.DB, len(dsns))
	for i, dsn := range dsns {
		db, err := sqldb.Open(ctx, dsn)
		if err != nil {
			t.Fatalf("node %d: %v", i+1, err)
		}
		defer db.Close()
		nodes[i] = db
		var state, size string
		if err := db.QueryRowContext(ctx, "SELECT (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME='WSREP_LOCAL_STATE_COMMENT'), (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME='WSREP_CLUSTER_SIZE')").Scan(&state, &size); err != nil {
			t.Fatalf("node %d: wsrep status: %v", i+1, err)
		}
		if state != "Synced" || size != "3" {
			t.Fatalf("node %d: %s in a cluster of %s; want Synced in 3", i+1, state, size)
		}
	}

	// A user lock is no lock across nodes: refused (1235, MariaDB 10.11)
	// or taken on each node at once (measured on 11.8).
	held := make([]int64, 2)
	for i := range held {
		conn, err := nodes[i].Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close() // holds the lock until the test ends
		err = conn.QueryRowContext(ctx, "SELECT GET_LOCK('gpubridge.galera.probe', 0)").Scan(&held[i])
		var me *mysql.MySQLError
		if errors.As(err, &me) && me.Number == 1235 {
			t.Logf("GET_LOCK on node %d: refused with 1235 (%s)", i+1, me.Message)
			held = nil
			break
		}
		if err != nil {
			t.Fatalf("GET_LOCK on node %d: %v", i+1, err)
		}
	}
	if held != nil {
		if held[0] != 1 || held[1] != 1 {
			t.Fatalf("GET_LOCK of one name on node 1 and node 2 = %v; a lock held on node 1 kept node 2 out: user locks would work across nodes, which the lease design assumes they do not", held)
		}
		t.Log("GET_LOCK of one name: granted on node 1 and on node 2 at once (a user lock is local to its node)")
	}

	if _, err := nodes[0].ExecContext(ctx, "CREATE DATABASE `"+name+"`"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // the pools above are closed by then
		if db, err := sqldb.Open(context.Background(), dsns[0]); err == nil {
			_, _ = db.ExecContext(context.Background(), "DROP DATABASE IF EXISTS `"+name+"`")
			db.Close()
		}
	})
	if _, err := nodes[0].ExecContext(ctx, "CREATE TABLE `"+name+"`.probe (id INT PRIMARY KEY, v VARCHAR(16))"); err != nil {
		t.Fatal(err)
	}
	if _, err := nodes[0].ExecContext(ctx, "INSERT INTO `"+name+"`.probe VALUES (1, 'from node 1')"); err != nil {
		t.Fatal(err)
	}
	// A commit is certified on every node before it returns, but applied
	// on the others a moment later: a read on node 3 right after the write
	// sees it only as a causal read (wsrep_sync_wait), which is what a
	// process reading what another wrote through another node must ask for.
	reader, err := nodes[2].Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if _, err := reader.ExecContext(ctx, "SET SESSION wsrep_sync_wait = 1"); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := reader.QueryRowContext(ctx, "SELECT v FROM `"+name+"`.probe WHERE id = 1").Scan(&v); err != nil || v != "from node 1" {
		t.Fatalf("node 3 reads %q, %v; want the row written through node 1 (causal read)", v, err)
	}

	cfg, err := mysql.ParseDSN(dsns[1])
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = name
	db, err := sqldb.OpenMigrated(ctx, cfg.FormatDSN())
	if err != nil {
		t.Fatalf("migrate gpubridge's schema through node 2: %v", err)
	}
	db.Close()
	var noPK []string
	if err := reader.SelectContext(ctx, &noPK, `SELECT t.table_name FROM information_schema.tables t
		LEFT JOIN information_schema.table_constraints c ON c.table_schema = t.table_schema AND c.table_name = t.table_name AND c.constraint_type = 'PRIMARY KEY'
		WHERE t.table_schema = ? AND t.table_type = 'BASE TABLE' AND c.constraint_name IS NULL ORDER BY 1`, name); err != nil {
		t.Fatal(err)
	}
	if len(noPK) > 0 {
		t.Errorf("tables without a primary key (Galera needs one on every table): %s", strings.Join(noPK, ", "))
	}
	var tables int
	if err := reader.GetContext(ctx, &tables, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = ?", name); err != nil || tables < 10 {
		t.Fatalf("node 3 sees %d tables of the schema migrated through node 2 (%v)", tables, err)
	}
}
