//go:build integration

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
	"github.com/gpubridge/gpubridge/test/bench/synth"
)

// TestIngestCLI drives `gpubridge ingest` and `show ingest` on the
// testbed with a scratch ledger: the first ingest says where it starts and
// why; rows purged after slurmdbd rolled their hours up make the next
// ingest refuse, naming the hours and the accept-missing= that lets it
// past; accept-missing= for those hours ingests the rest, prints the gap
// and audits it; pass=changes says what it re-read; show ingest shows the
// watermark and the passes.
func TestIngestCLI(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	cfg, err := mysql.ParseDSN(env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sqldb.Open(ctx, env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = fmt.Sprintf("gpubridge_m4_icli_%06d", rand.IntN(1e6))
	if _, err := admin.Exec("CREATE DATABASE " + cfg.DBName); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + cfg.DBName); err != nil {
			t.Errorf("drop the scratch database: %v", err)
		}
		admin.Close()
	})
	t.Setenv("GPUBRIDGE_DB_DSN", cfg.FormatDSN())
	rw, err := sqldb.Open(ctx, env.BenchDBDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rw.Close() })

	// Account m4syncli with alice's association, and three runs of a day
	// before this testbed started (no real job there).
	acct := "m4syncli"
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
	lo := uint32(synth.TestIDs + 220000)
	cleanup := func() {
		if _, err := synth.Delete(context.Background(), rw, env.Cluster, lo, lo+100); err != nil {
			t.Errorf("remove the synthetic rows: %v", err)
		}
		for _, tbl := range []string{"hour", "day", "month"} {
			if _, err := rw.Exec("DELETE FROM `"+env.Cluster+"_assoc_usage_"+tbl+"_table` WHERE id = ?", assoc); err != nil {
				t.Errorf("remove the rollups: %v", err)
			}
		}
	}
	cleanup()
	t.Cleanup(cleanup)
	tres, err := synth.LoadTRES(ctx, rw)
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) int64 {
		v, err := time.Parse(time.DateTime, "2026-11-20 "+s)
		if err != nil {
			t.Fatal(err)
		}
		return v.Unix()
	}
	uid := env.Exec(t, "", "id", "-u", "alice")
	var user int64
	fmt.Sscan(uid, &user)
	row := func(id uint32, start, end string, gpus map[string]int) synth.Row {
		return synth.Row{JobID: lo + id, Submit: at(start) - 60, Start: at(start), End: at(end), Account: acct, Partition: "pool",
			Assoc: assoc, User: user, State: synth.StateCompleted, TRES: tres.Alloc(4, gpus)}
	}
	rows := []synth.Row{
		row(0, "10:00:00", "11:00:00", map[string]int{"h100": 2}),
		row(1, "12:00:00", "13:30:00", map[string]int{"1g.10gb": 1}),
		row(2, "14:00:00", "15:00:00", map[string]int{"h100": 1}),
	}
	if err := synth.Insert(ctx, rw, env.Cluster, rows); err != nil {
		t.Fatal(err)
	}
	ingest := func(wantCode int, args ...string) string {
		t.Helper()
		code, out, errOut := runCode(append([]string{"ingest"}, args...)...)
		t.Logf("$ gpubridge ingest %s\n%s%s", strings.Join(args, " "), out, errOut)
		if code != wantCode {
			t.Fatalf("gpubridge ingest %v: exit %d, want %d\n%s%s", args, code, wantCode, out, errOut)
		}
		return out + errOut
	}

	// The first ingest of the ledger, to 11:30 of that day.
	out := ingest(0, "to=2026-11-20T11:30:00")
	if !strings.Contains(out, "started at the start of the previous period 2026-11: this is the first ingest from slurmdb into this ledger") {
		t.Errorf("the first ingest does not say where it starts and why:\n%s", out)
	}
	// slurmdbd rolls the hours up; then the second run's row goes before
	// anyone ingested it.
	env.Exec(t, "", "sacctmgr", "-i", "rollup", "2026-11-20T10:00:00", "2026-11-20T16:00:00")
	if _, err := synth.Delete(ctx, rw, env.Cluster, lo+1, lo+2); err != nil {
		t.Fatal(err)
	}
	out = ingest(1, "to=2026-11-20T17:00:00")
	for _, want := range []string{"job rows missing from slurm_acct_db", acct + "/alice: 5400 GPU-seconds (rollups 5400, job rows 0) in 2026-11-20T12:00:00Z..2026-11-20T14:00:00Z",
		"gpubridge ingest accept-missing=2026-11-20T12:00..2026-11-20T14:00"} {
		if !strings.Contains(out, want) {
			t.Errorf("refusal lacks %q:\n%s", want, out)
		}
	}
	if code, _, _ := runCode("ingest", "to=2026-11-20T17:00:00", "accept-missing=2026-11-20T12"); code != 2 {
		t.Errorf("accept-missing without a range: exit %d, want 2", code)
	}
	out = ingest(1, "to=2026-11-20T17:00:00", "accept-missing=2026-11-20T13:00..2026-11-20T14:00") // not the named hours
	if !strings.Contains(out, "job rows missing") {
		t.Errorf("a gap accepted for other hours let the ingest through:\n%s", out)
	}
	out = ingest(0, "to=2026-11-20T17:00:00", "accept-missing=2026-11-20T12:00..2026-11-20T14:00")
	if !strings.Contains(out, "accepted gap, not billed: "+acct+"/alice: 5400 GPU-seconds") {
		t.Errorf("the accepted gap is not reported:\n%s", out)
	}
	db, err := sqldb.Open(ctx, cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var audited int
	if err := db.Get(&audited, "SELECT COUNT(*) FROM audit_log WHERE action = 'accept-missing' AND object_name = ? AND after_json LIKE ?", env.Cluster+"/slurmdb", "%"+acct+"%"); err != nil || audited != 1 {
		t.Errorf("%d audit entries for the gap (%v), want 1", audited, err)
	}
	out = ingest(0, "to=2026-11-20T18:00:00", "pass=changes")
	if !strings.Contains(out, "changes pass: rows changed since") {
		t.Errorf("pass=changes does not say what it re-read:\n%s", out)
	}
	code, sout, serr := runCode("show", "ingest")
	t.Logf("$ gpubridge show ingest\n%s%s", sout, serr)
	if code != 0 || !strings.Contains(sout, "slurmdb") || !strings.Contains(sout, "2026-11-20T18:00:00Z") || !strings.Contains(sout, "closed periods: none") {
		t.Errorf("show ingest: exit %d\n%s%s", code, sout, serr)
	}
	var lines int
	if err := db.Get(&lines, "SELECT COUNT(*) FROM usage_ledger WHERE account = ?", acct); err != nil || lines != 2 {
		t.Errorf("%d ledger lines of %s (%v), want 2 (runs 0 and 2; the purged run is not billed)", lines, acct, err)
	}
}
