//go:build integration

package main

import (
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/store"
	"github.com/gpubridge/gpubridge/bridge/reserve/store/storetest"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
	"github.com/gpubridge/gpubridge/test/bench/synth"
)

// TestClusterUnset runs the jobs of the daemon once (ingest, booking
// charges, node health credits, the period close) and the FOCUS export
// with `cluster:` unset in the configuration, on the testbed with a
// scratch database: every row gpubridge writes (ledger lines, watermark,
// passes, coverage, booking charges, credit lines, the closed period) and
// every exported FOCUS line (billing account, invoice, resource) carries
// the name slurmrestd reports, the testbed's cluster, never "".
func TestClusterUnset(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	sc, err := storetest.New(ctx, env.DBDSN, "gpubridge_cun")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sc.Close() })
	cfg := filepath.Join(t.TempDir(), "gpubridge.yaml")
	if err := os.WriteFile(cfg, []byte("version: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GPUBRIDGE_CONFIG", cfg)
	t.Setenv("GPUBRIDGE_CLUSTER", "") // cluster: unset: slurmrestd names it
	t.Setenv("GPUBRIDGE_DB_DSN", sc.DSN)
	t.Setenv("GPUBRIDGE_SLURMREST_TIMEOUT", "120s")
	ok := func(args ...string) string {
		t.Helper()
		out, errs, code := cliClosed(args...)
		t.Logf("$ gpubridge %s\n%s%s", strings.Join(args, " "), out, errs)
		if code != 0 {
			t.Fatalf("gpubridge %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
		return out
	}

	// Two synthetic runs of a tenant's account, three days before this
	// month (a period that can be closed), one ended NODE_FAIL (credited).
	acct, lo := "m4syncun", uint32(synth.TestIDs+230000)
	now := time.Now().UTC()
	day := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, -3)
	period := day.Format("2006-01")
	clusterUnsetRuns(t, ctx, env, acct, lo, day)
	if _, err := tenantstore.New(sc.DB).Put(ctx, "cluster-unset-test", []tenant.Tenant{{Name: acct, Users: []string{"alice"}, State: tenant.Active}}); err != nil {
		t.Fatal(err)
	}

	// A GPU booking of that day, in the booking store of the cluster.
	bookings := store.New(sc.DB, env.Cluster)
	if err := bookings.Atomic(ctx, nil, func(tx reserve.Tx) error {
		_, err := tx.Insert(ctx, "cluster-unset-test", reserve.Booking{Tenant: acct, Kind: reserve.KindGPU, GPUType: "h100", Count: 1,
			Start: day.Add(2 * time.Hour), End: day.Add(3 * time.Hour), State: reserve.StateScheduled, CreatedBy: "cluster-unset-test",
			CreatedAt: day, UpdatedAt: day})
		return err
	}); err != nil {
		t.Fatal(err)
	}

	for _, tier := range []string{"reserved", "ondemand", "booked"} {
		ok("add", "rate", "type=h100", "tier="+tier, "price=1.00", "from=2020-01-01", "currency=EUR")
	}
	ok("add", "gputype", "name=1g.10gb", "parent=h100")
	ok("add", "gputype", "name=3g.40gb", "parent=h100")
	ok("ingest", "to="+time.Now().UTC().Add(-time.Minute).Format("2006-01-02T15:04:05"))
	if out := ok("show", "ingest"); !strings.Contains(out, env.Cluster) {
		t.Errorf("show ingest does not name the cluster %q:\n%s", env.Cluster, out)
	}
	ok("charge", "bookings")
	ok("credit", "run-once", "lookback=40d")
	ok("-i", "close", "period="+period, "ingest=no")
	focus := filepath.Join(t.TempDir(), "focus.csv")
	ok("export", "chargeback", "period="+period, "format=focus", "file="+focus)
	clusterUnsetFocus(t, focus, env.Cluster, env.Cluster+"-"+period)
	clusterUnsetRows(t, sc.DB.DB, env.Cluster, "usage_ledger", "ingest_watermark", "booking_charge", "ledger_credit", "ledger_period")
}

// clusterUnsetRuns writes two runs of acct (alice's association) into
// slurmdbd's tables at day, the second ended NODE_FAIL; the test's end
// removes them.
func clusterUnsetRuns(t *testing.T, ctx context.Context, env testbed.Env, acct string, lo uint32, day time.Time) {
	t.Helper()
	rw, err := sqldb.Open(ctx, env.BenchDBDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rw.Close() })
	_, _ = env.Run(ctx, "", nil, "sacctmgr", "-i", "add", "account", acct, "cluster="+env.Cluster, "parent=root")
	_, _ = env.Run(ctx, "", nil, "sacctmgr", "-i", "add", "user", "alice", "account="+acct, "cluster="+env.Cluster)
	var assoc int64
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		err := rw.Get(&assoc, "SELECT id_assoc FROM `"+env.Cluster+"_assoc_table` WHERE acct = ? AND user = 'alice' AND deleted = 0", acct)
		if err == nil {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("association %s/alice: %v", acct, err)
		}
	}
	cleanup := func() {
		if _, err := synth.Delete(context.Background(), rw, env.Cluster, lo, lo+10); err != nil {
			t.Errorf("remove the synthetic rows: %v", err)
		}
	}
	cleanup()
	t.Cleanup(cleanup)
	tres, err := synth.LoadTRES(ctx, rw)
	if err != nil {
		t.Fatal(err)
	}
	var user int64
	fmt.Sscan(env.Exec(t, "", "id", "-u", "alice"), &user)
	const nodeFail = 7 // JOB_NODE_FAIL
	row := func(id uint32, from, to time.Duration, state int) synth.Row {
		return synth.Row{JobID: lo + id, Submit: day.Add(from).Unix() - 60, Start: day.Add(from).Unix(), End: day.Add(to).Unix(), Account: acct,
			Partition: "pool", Assoc: assoc, User: user, State: state, TRES: tres.Alloc(4, map[string]int{"h100": 1})}
	}
	rows := []synth.Row{row(0, 10*time.Hour, 11*time.Hour, synth.StateCompleted), row(1, 12*time.Hour, 13*time.Hour, nodeFail)}
	if err := synth.Insert(ctx, rw, env.Cluster, rows); err != nil {
		t.Fatal(err)
	}
}

// clusterUnsetFocus checks that every line of the FOCUS file names the
// cluster as its billing account and invoice.
func clusterUnsetFocus(t *testing.T, file, cluster, invoice string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 2 {
		t.Fatalf("the FOCUS export has no line: %v", recs)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for i, r := range recs[1:] {
		if r[col["InvoiceId"]] != invoice || r[col["BillingAccountId"]] != cluster || !strings.HasPrefix(r[col["ResourceId"]], cluster+"/") && r[col["ResourceId"]] != "" {
			t.Errorf("FOCUS line %d: InvoiceId %q, BillingAccountId %q, ResourceId %q; want %q, %q, %s/...",
				i+1, r[col["InvoiceId"]], r[col["BillingAccountId"]], r[col["ResourceId"]], invoice, cluster, cluster)
		}
	}
}

// clusterUnsetRows checks that every table of the database with a
// cluster column holds cluster only, and that each of want holds rows.
func clusterUnsetRows(t *testing.T, db *sql.DB, cluster string, want ...string) {
	t.Helper()
	rows, err := db.Query("SELECT table_name FROM information_schema.columns WHERE table_schema = DATABASE() AND column_name = 'cluster'")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, s)
	}
	rows.Close()
	held := map[string]bool{}
	for _, tbl := range tables {
		rs, err := db.Query("SELECT cluster, COUNT(*) FROM `" + tbl + "` GROUP BY cluster")
		if err != nil {
			t.Fatal(err)
		}
		for rs.Next() {
			var c string
			var n int
			if err := rs.Scan(&c, &n); err != nil {
				t.Fatal(err)
			}
			held[tbl] = true
			if c != cluster {
				t.Errorf("table %s: %d rows of cluster %q, want %q", tbl, n, c, cluster)
			}
		}
		rs.Close()
	}
	for _, tbl := range want {
		if !held[tbl] {
			t.Errorf("table %s holds no row", tbl)
		}
	}
}
