//go:build integration

package tenantstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/bridge/tenantstore/tenantstoretest"
	"github.com/gpubridge/gpubridge/internal/money"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// scratchStore opens a migrated scratch database gpubridge_t3store_<pid>
// on the testbed's MariaDB, dropped when the test ends.
func scratchStore(t *testing.T) *tenantstore.Store {
	t.Helper()
	tb := testbed.Require(t)
	if tb.DBDSN == "" {
		t.Fatal("GPUBRIDGE_DB_DSN is not set: `source .testbed/env`")
	}
	cfg, err := mysql.ParseDSN(tb.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("gpubridge_t3store_%d", os.Getpid())
	cfg.DBName = ""
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+name); err != nil {
		t.Fatalf("create scratch database %s: %v", name, err)
	}
	t.Cleanup(func() {
		admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name)
		admin.Close()
	})
	cfg.DBName = name
	db, err := sqldb.OpenMigrated(ctx, cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return tenantstore.New(db).WithClock(func() time.Time { clock = clock.Add(time.Second); return clock })
}

func TestStoreRoundTripAndAudit(t *testing.T) {
	st := scratchStore(t)
	ctx := context.Background()
	cpus, mem, budget := int64(64), tenant.Megabyte(512*1024), money.MustParse("2500.00")
	fils := money.MustParse("1.234") // a KWD budget: stored exactly, not as cents
	acme := tenant.Tenant{Name: "acme", Description: "Acme ML", Organization: "acme-corp", Users: []string{"bob", "alice"}, Admins: []string{"alice"},
		GPUs: tenant.Quota{"h100": 16, "1g.10gb": 14}, CPUs: &cpus, Memory: &mem,
		Burst: tenant.Burst{Enabled: true, MaxOnDemandGPUs: 8, MonthlyBudget: &budget}, State: tenant.Active}
	globex := tenant.Tenant{Name: "globex", Users: []string{"carol"}, Burst: tenant.Burst{MonthlyBudget: &fils}, State: tenant.Active}

	cs, err := st.Put(ctx, "tester", []tenant.Tenant{acme, globex})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].Action != tenantstore.ActionCreate {
		t.Fatalf("changes = %+v", cs)
	}
	got, err := st.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	acme.Normalize()
	globex.Normalize()
	if diff := cmp.Diff([]tenant.Tenant{acme, globex}, got); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}

	// An unchanged tenant writes nothing, not even an audit row.
	if cs, err := st.Put(ctx, "tester", []tenant.Tenant{acme}); err != nil || len(cs) != 0 {
		t.Errorf("re-put unchanged: %v %v", cs, err)
	}
	// A change is audited with before and after.
	acme2 := acme.Clone()
	acme2.GPUs["h100"] = 24
	if _, err := st.Put(ctx, "alice", []tenant.Tenant{acme2}); err != nil {
		t.Fatal(err)
	}
	es, err := st.Audit(ctx, tenantstore.AuditFilter{Kind: tenantstore.AuditKind, Name: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].Action != tenantstore.ActionModify || es[0].Actor != "alice" || es[0].Before == nil || es[0].After == nil {
		t.Fatalf("audit = %+v", es)
	}
	if !strings.Contains(*es[0].Before, `"h100":16`) || !strings.Contains(*es[0].After, `"h100":24`) {
		t.Errorf("audit before/after: %s -> %s", *es[0].Before, *es[0].After)
	}

	// Delete: marked, then removed; both audited.
	if _, err := st.MarkDeleting(ctx, "tester", []string{"globex"}); err != nil {
		t.Fatal(err)
	}
	g, _ := st.Get(ctx, "globex")
	if !g.IsDeleting() {
		t.Errorf("globex state = %s", g.State)
	}
	if err := st.Remove(ctx, "tester", []string{"globex", "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, "globex"); err == nil {
		t.Error("globex still stored after Remove")
	}
	if _, err := st.Get(ctx, "acme"); err != nil {
		t.Errorf("Remove dropped acme, which is not being deleted: %v", err)
	}
	es, _ = st.Audit(ctx, tenantstore.AuditFilter{Name: "globex"})
	var actions []string
	for _, e := range es {
		actions = append(actions, e.Action)
	}
	if diff := cmp.Diff([]string{"remove", "delete", "create"}, actions); diff != "" {
		t.Errorf("globex audit actions (-want +got):\n%s", diff)
	}
	if _, err := st.MarkDeleting(ctx, "tester", []string{"nosuch"}); err == nil {
		t.Error("MarkDeleting of a missing tenant did not fail")
	}
}

// TestStoreRefusesCaseCollisionAtomically: the database itself refuses a
// name that differs from a stored one only in case, and the failed batch
// leaves nothing behind (no tenant, no audit row).
func TestStoreRefusesCaseCollisionAtomically(t *testing.T) {
	st := scratchStore(t)
	ctx := context.Background()
	if _, err := st.Put(ctx, "tester", []tenant.Tenant{{Name: "teama", State: tenant.Active}}); err != nil {
		t.Fatal(err)
	}
	before, _ := st.Audit(ctx, tenantstore.AuditFilter{})
	_, err := st.Put(ctx, "tester", []tenant.Tenant{{Name: "okay", State: tenant.Active}, {Name: "TeamA", State: tenant.Active}})
	if err == nil || !strings.Contains(err.Error(), "collides") {
		t.Fatalf("Put TeamA beside teama: err = %v", err)
	}
	names, _ := st.Names(ctx)
	if diff := cmp.Diff([]string{"teama"}, names); diff != "" {
		t.Errorf("names after the refused batch (-want +got):\n%s", diff)
	}
	after, _ := st.Audit(ctx, tenantstore.AuditFilter{})
	if len(after) != len(before) {
		t.Errorf("audit rows %d -> %d after a refused batch", len(before), len(after))
	}
}

// TestStoreConformance runs the conformance suite (the same tests as the
// in-memory store's) on the MariaDB store.
func TestStoreConformance(t *testing.T) {
	tenantstoretest.Run(t, func(t *testing.T) tenantstoretest.Store { return scratchStore(t) })
}

// TestStorePutRetried: Put's transaction runs again after a certification
// conflict at its commit (sqldb.WithTx); the changes it returns are one
// attempt's, not both attempts' (a doubled list would audit, and apply to
// Slurm, every tenant twice).
func TestStorePutRetried(t *testing.T) {
	st := scratchStore(t)
	calls := 0
	ctx := sqldb.WithCommitFault(context.Background(), func() error {
		calls++
		if calls == 1 {
			return &mysql.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock; try restarting transaction"}
		}
		return nil
	}, nil)
	ts := []tenant.Tenant{{Name: "retried-a", Users: []string{"ann"}, State: tenant.Active}, {Name: "retried-b", Users: []string{"ben"}, State: tenant.Active}}
	cs, err := st.Put(ctx, "tester", ts)
	if err != nil || calls != 2 {
		t.Fatalf("Put = %v after %d commits; want stored by the second", err, calls)
	}
	if len(cs) != 2 || cs[0].Name != "retried-a" || cs[1].Name != "retried-b" || cs[0].Action != tenantstore.ActionCreate {
		t.Errorf("changes = %+v; want the two creations once", cs)
	}
	es, err := st.Audit(context.Background(), tenantstore.AuditFilter{Kind: tenantstore.AuditKind, Name: "retried-a"})
	if err != nil || len(es) != 1 {
		t.Errorf("audit rows of retried-a = %d (%v); want 1", len(es), err)
	}
}
