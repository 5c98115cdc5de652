//go:build integration

package sqldb_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestGaleraCertificationConflict: two transactions, through node 1 and
// node 2, write the same row, both before either commits. Galera lets
// both run (a row lock is local to its node) and aborts one at commit or
// when the other's writeset is applied (1213). Without retries one of the
// two fails with ErrRetriesExhausted wrapping 1213; with WithTx's retries
// both are stored (the counter is 2) and the retry is counted.
func TestGaleraCertificationConflict(t *testing.T) {
	_, dsns := testbed.RequireGalera(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := fmt.Sprintf("gpubridge_cert%d_%d", os.Getpid()%100000, time.Now().UnixNano()%1000000)
	admin, err := sqldb.Open(ctx, dsns[0])
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+name+"`"); err != nil {
		t.Fatal(err)
	}
	defer admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS `"+name+"`")
	if _, err := admin.ExecContext(ctx, "CREATE TABLE `"+name+"`.counter (id INT PRIMARY KEY, n INT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	nodes := make([]*sqlx.DB, 2)
	for i := range nodes {
		cfg, err := mysql.ParseDSN(dsns[i])
		if err != nil {
			t.Fatal(err)
		}
		cfg.DBName = name
		cfg.Params = map[string]string{"wsrep_sync_wait": "1"}
		if nodes[i], err = sqldb.Open(ctx, cfg.FormatDSN()); err != nil {
			t.Fatal(err)
		}
		defer nodes[i].Close()
	}
	cases := map[string]struct {
		retry      sqldb.Retry
		wantFailed int
	}{
		"without retries": {sqldb.Retry{Attempts: 1}, 1},
		"with WithTx's":   {sqldb.DefaultRetry, 0},
	}
	for _, cn := range []string{"without retries", "with WithTx's"} {
		c := cases[cn]
		t.Run(cn, func(t *testing.T) {
			if _, err := admin.ExecContext(ctx, "REPLACE INTO `"+name+"`.counter VALUES (1, 0)"); err != nil {
				t.Fatal(err)
			}
			before := sqldb.Retries()["deadlock"]
			var written sync.WaitGroup // both wrote the row, neither committed
			written.Add(2)
			errs := make([]error, 2)
			var wg sync.WaitGroup
			for i, db := range nodes {
				wg.Go(func() {
					first := true
					errs[i] = c.retry.WithTx(ctx, db, func(tx *sqlx.Tx) error {
						_, err := tx.ExecContext(ctx, "UPDATE counter SET n = n + 1 WHERE id = 1")
						if first {
							first = false
							written.Done()
							written.Wait()
						}
						return err
					})
				})
			}
			wg.Wait()
			failed := 0
			for i, err := range errs {
				switch {
				case err == nil:
				case errors.Is(err, sqldb.ErrRetriesExhausted) && sqldb.Conflict(err) == "deadlock":
					failed++
					t.Logf("node %d: %v", i+1, err)
				default:
					t.Errorf("node %d: %v", i+1, err)
				}
			}
			var n int
			if err := nodes[1].GetContext(ctx, &n, "SELECT n FROM counter WHERE id = 1"); err != nil {
				t.Fatal(err)
			}
			retried := sqldb.Retries()["deadlock"] - before
			t.Logf("counter %d, %d failed, %d retried", n, failed, retried)
			if failed != c.wantFailed || n != 2-failed {
				t.Fatalf("%d of 2 failed with a certification conflict, counter %d; want %d failed and the counter at %d", failed, n, c.wantFailed, 2-c.wantFailed)
			}
			if c.wantFailed == 0 && retried == 0 {
				t.Fatal("both committed but no certification conflict was retried: the two transactions did not overlap")
			}
		})
	}
}

// TestGaleraNodesDSN: a database.dsn listing a node that is down
// (127.0.0.1:4399, nothing listens) before Galera nodes 2 and 3 connects
// to node 2, the first reachable and Synced one, and says so (NodeOf).
func TestGaleraNodesDSN(t *testing.T) {
	_, dsns := testbed.RequireGalera(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := mysql.ParseDSN(dsns[0])
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr = "127.0.0.1:4399"
	list := strings.Join([]string{cfg.FormatDSN(), dsns[1], dsns[2]}, ",")
	c, err := sqldb.Connector(list)
	if err != nil {
		t.Fatal(err)
	}
	db := sqldb.Pool(c)
	defer db.Close()
	began := time.Now()
	var port int
	if err := db.GetContext(ctx, &port, "SELECT @@port"); err != nil {
		t.Fatalf("through %s: %v", sqldb.Redact(list), err)
	}
	n2, _ := mysql.ParseDSN(dsns[1])
	if want := n2.Addr; sqldb.NodeOf(c) != want || !strings.HasSuffix(want, fmt.Sprint(port)) {
		t.Fatalf("connected to port %d, NodeOf %q; want node 2 (%s)", port, sqldb.NodeOf(c), want)
	}
	t.Logf("skipped the lost node and connected to node 2 (%s) in %v", sqldb.NodeOf(c), time.Since(began).Round(time.Millisecond))
	st, err := sqldb.Status(ctx, db)
	if err != nil || !st.Galera || st.LocalState != 4 || !st.Synced() || !strings.HasSuffix(st.Node, fmt.Sprintf(":%d", port)) {
		t.Fatalf("Status = %+v, %v; want node 2, Galera, Synced (4)", st, err)
	}
}

// TestStatusSingleServer: the testbed's single MariaDB is no Galera node
// (wsrep off) and counts as synced; one DSN gives no node list.
func TestStatusSingleServer(t *testing.T) {
	e := testbed.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := sqldb.Connector(e.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	db := sqldb.Pool(c)
	defer db.Close()
	st, err := sqldb.Status(ctx, db)
	if err != nil || st.Galera || !st.Synced() || st.Node == "" || sqldb.NodeOf(c) != "" {
		t.Fatalf("Status = %+v, %v, NodeOf %q; want a node, no Galera, synced, no node list", st, err, sqldb.NodeOf(c))
	}
}
