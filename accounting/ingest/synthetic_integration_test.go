//go:build integration

package ingest_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/export/exporttest"
	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/internal/acctest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/testbed"
	"github.com/gpubridge/gpubridge/test/bench/synth"
)

var rules = meter.TierRules{OnDemandPartition: "ondemand", OnDemandQOS: "ondemand"}

func ts(s string) int64 {
	t, err := time.Parse(time.DateTime, s)
	if err != nil {
		panic(err)
	}
	return t.Unix()
}

func per(s string) meter.Period {
	p, err := meter.ParsePeriod(s)
	if err != nil {
		panic(err)
	}
	return p
}

// cardFor prices every GPU type present in the ledger (h100 and its MIG
// profiles from their parent; anything else at 1.00), so a close is never
// blocked by other people's jobs that a window happens to hold.
func cardFor(t *testing.T, db *sqlx.DB) pricing.Card {
	t.Helper()
	var types []string
	if err := db.Select(&types, "SELECT DISTINCT gpu_type FROM usage_ledger UNION SELECT DISTINCT gpu_type FROM usage_accrual"); err != nil {
		t.Fatal(err)
	}
	y := "version: 1\ncurrency: EUR\ntypes:\n  - {name: 1g.10gb, parent: h100}\n  - {name: 3g.40gb, parent: h100}\nrates:\n" +
		"  - {type: h100, tier: reserved, perGPUHour: \"2.10\", from: 2020-01-01}\n  - {type: h100, tier: ondemand, perGPUHour: \"3.50\", from: 2020-01-01}\n"
	for _, typ := range types {
		if typ != "h100" && typ != "1g.10gb" && typ != "3g.40gb" {
			y += "  - {type: \"" + typ + "\", perGPUHour: \"1.00\", from: 2020-01-01}\n"
		}
	}
	c, err := pricing.ParseYAML([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSyntheticLedger writes the edge cases into the testbed's job
// table (year 2031, ids from synth.TestIDs, accounts m4syn-*) and checks the
// ledger against the plain-SQL reference after each step: a job spanning a
// month boundary, a job still running at close (accrued, continued next
// month, never twice), a requeue (two runs, one id), an id reused after wrap,
// jobs ending exactly on a month edge and on a window edge, jobs cancelled
// before start, a job with a full GPU and a MIG slice, untyped GPUs,
// on-demand by partition and by QOS; then a late record after the close
// (an adjustment; the closed month's export byte-identical).
func TestSyntheticLedger(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	lo := uint32(synth.TestIDs)
	sy := acctest.NewSynth(t, env, lo, 10000, []string{"alice"}, "m4syn-a", "m4syn-b")
	ro, rw, qos := sy.RO, sy.RW, sy.QOS
	row := func(id uint32, acct, submit, start, end string, gpus map[string]int) synth.Row {
		return sy.Row(id, acct, "alice", submit, start, end, gpus)
	}
	h100 := func(n int) map[string]int { return map[string]int{"h100": n} }
	rows := []synth.Row{
		row(1, "m4syn-a", "2031-01-31 22:59:00", "2031-01-31 23:00:00", "2031-02-01 01:00:00", h100(2)),                      // spans Jan/Feb
		row(3, "m4syn-a", "2031-02-10 00:00:00", "2031-02-10 00:01:00", "2031-02-10 01:00:00", map[string]int{"1g.10gb": 1}), // requeue, run 1
		row(3, "m4syn-a", "2031-02-10 01:00:10", "2031-02-10 01:00:20", "2031-02-10 02:00:00", map[string]int{"1g.10gb": 1}), // requeue, run 2
		row(4, "m4syn-a", "2031-01-05 00:00:00", "2031-01-05 00:00:00", "2031-01-05 03:00:00", map[string]int{"3g.40gb": 1}), // id reused
		row(4, "m4syn-b", "2031-02-05 00:00:00", "2031-02-05 00:00:00", "2031-02-05 03:00:00", map[string]int{"3g.40gb": 1}), // id reused
		row(5, "m4syn-b", "2031-01-31 21:00:00", "2031-01-31 22:00:00", "2031-02-01 00:00:00", h100(1)),                      // ends on the month edge
		row(6, "m4syn-b", "2031-02-14 22:00:00", "2031-02-14 23:00:00", "2031-02-15 00:00:00", h100(1)),                      // ends on the window edge
		row(7, "m4syn-b", "2031-01-31 23:00:00", "2031-02-01 00:00:00", "2031-02-01 00:30:00", h100(3)),                      // starts on the edge
		row(8, "m4syn-b", "2031-02-03 00:00:00", "", "2031-02-03 01:00:00", h100(4)),                                         // cancelled before start
		row(9, "m4syn-b", "2031-02-03 00:00:00", "2031-02-03 02:00:00", "2031-02-03 02:00:00", h100(4)),                      // cancelled, start = end
		row(10, "m4syn-b", "2031-02-20 09:00:00", "2031-02-20 10:00:00", "2031-02-20 12:00:00", map[string]int{"h100": 1, "1g.10gb": 1}),
		row(11, "m4syn-b", "2031-02-21 09:00:00", "2031-02-21 10:00:00", "2031-02-21 10:10:00", map[string]int{"": 2}), // untyped
		row(12, "m4syn-a", "2031-02-22 09:00:00", "2031-02-22 10:00:00", "2031-02-22 11:00:00", h100(1)),               // ondemand partition
		row(13, "m4syn-a", "2031-02-23 09:00:00", "2031-02-23 10:00:00", "2031-02-23 11:00:00", h100(1)),               // ondemand QOS
		row(14, "m4syn-a", "2031-02-24 09:00:00", "2031-02-24 10:00:00", "2031-02-24 11:00:00", nil),                   // CPU only
		row(2, "m4syn-a", "2031-02-26 23:00:00", "2031-02-27 00:00:00", "", h100(1)),                                   // still running
	}
	rows[1].State = synth.StateRequeued
	rows[8].State, rows[9].State = synth.StateCancelled, synth.StateCancelled
	rows[12].Partition = "ondemand"
	rows[13].QOS = qos["ondemand"]
	rows[15].State = synth.StateRunning
	sy.Insert(rows...)

	db, _ := acctest.ScratchDB(t, env, "synthetic")
	store := ledger.NewDB(db, nil)
	src, err := ingest.NewSlurmDB(ro, env.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	var now time.Time
	in := &ingest.Ingester{Cluster: env.Cluster, Source: src, Ledger: store, Rules: rules, Clock: func() time.Time { return now }, BatchRuns: 3, UseHostClock: true}
	like := "m4syn-%"
	check := func(step string, asOf int64) {
		t.Helper()
		want := acctest.Reference(t, ro, env.Cluster, like, per("2031-01"), per("2031-03"), asOf, 0)
		if len(want) == 0 {
			t.Fatalf("%s: the reference is empty", step)
		}
		if d := cmp.Diff(want, acctest.LedgerSums(t, db, env.Cluster, like)); d != "" {
			t.Fatalf("%s: ledger vs SQL reference (-want +got)\n%s", step, d)
		}
	}

	// Step 1, as of 2031-03-01 12:00: two windows meeting at 2031-02-15 00:00:00.
	now = time.Unix(ts("2031-03-01 12:00:00"), 0)
	edge := time.Unix(ts("2031-02-15 00:00:00"), 0)
	if _, err := in.Ingest(ctx, ingest.Window{From: time.Unix(ts("2031-01-01 00:00:00"), 0), To: edge}); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Ingest(ctx, ingest.Window{From: edge}); err != nil {
		t.Fatal(err)
	}
	check("as of 2031-03-01 12:00", now.Unix())
	got := acctest.RunSums(t, db, env.Cluster, like)
	k := func(id uint32, submit, period string, tier meter.Tier, typ string) acctest.RunKey {
		return acctest.RunKey{Job: lo + id, Submit: ts(submit), Period: period, Tier: tier, Type: typ}
	}
	R, O := meter.Reserved, meter.OnDemand
	want := map[acctest.RunKey]int64{
		k(1, "2031-01-31 22:59:00", "2031-01", R, "h100"):     2 * 3600,
		k(1, "2031-01-31 22:59:00", "2031-02", R, "h100"):     2 * 3600,
		k(3, "2031-02-10 00:00:00", "2031-02", R, "1g.10gb"):  59 * 60,
		k(3, "2031-02-10 01:00:10", "2031-02", R, "1g.10gb"):  3600 - 20,
		k(4, "2031-01-05 00:00:00", "2031-01", R, "3g.40gb"):  3 * 3600,
		k(4, "2031-02-05 00:00:00", "2031-02", R, "3g.40gb"):  3 * 3600,
		k(5, "2031-01-31 21:00:00", "2031-01", R, "h100"):     2 * 3600,
		k(6, "2031-02-14 22:00:00", "2031-02", R, "h100"):     3600,
		k(7, "2031-01-31 23:00:00", "2031-02", R, "h100"):     3 * 1800,
		k(10, "2031-02-20 09:00:00", "2031-02", R, "h100"):    2 * 3600,
		k(10, "2031-02-20 09:00:00", "2031-02", R, "1g.10gb"): 2 * 3600,
		k(11, "2031-02-21 09:00:00", "2031-02", R, "gpu"):     2 * 600,
		k(12, "2031-02-22 09:00:00", "2031-02", O, "h100"):    3600,
		k(13, "2031-02-23 09:00:00", "2031-02", O, "h100"):    3600,
		k(2, "2031-02-26 23:00:00", "2031-02", R, "h100"):     2 * 86400,
		k(2, "2031-02-26 23:00:00", "2031-03", R, "h100"):     12 * 3600, // accrual
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("per run (-want +got)\n%s", d)
	}
	var accrued int64
	if err := db.Get(&accrued, "SELECT CAST(COALESCE(SUM(gpu_seconds), 0) AS SIGNED) FROM usage_accrual WHERE job_id = ?", lo+2); err != nil || accrued != 12*3600 {
		t.Fatalf("running job's accrual %d (%v), want 12 h", accrued, err)
	}
	// Re-ingesting the months adds nothing.
	res, err := in.Ingest(ctx, ingest.Window{From: time.Unix(ts("2031-01-01 00:00:00"), 0)})
	if err != nil || res.Stats.Lines != 0 {
		t.Fatalf("re-ingest wrote %d lines (%v), want 0", res.Stats.Lines, err)
	}

	// Step 2: close January and February, export February.
	card := cardFor(t, db)
	for _, p := range []string{"2031-01", "2031-02"} {
		if _, err := ledger.Close(ctx, store, ledger.CloseRequest{Cluster: env.Cluster, Period: per(p), Now: now, Actor: "test", Card: card,
			Tenants: ledger.Labels{"m4syn-a": "m4syn-a"}}); err != nil {
			t.Fatalf("close %s: %v", p, err)
		}
	}
	exportAll := func() map[string][]byte {
		out := map[string][]byte{}
		rec, ok, err := store.Period(ctx, env.Cluster, per("2031-02"))
		if err != nil || !ok {
			t.Fatalf("period record: %v %v", ok, err)
		}
		m := export.Meta{Cluster: env.Cluster, Period: per("2031-02"), Closed: true, ClosedAt: rec.ClosedAt, Card: rec.Snapshot.Card,
			Tenants: ledger.Labels(rec.Snapshot.Tenants)}
		lines := func(ctx context.Context, ordered bool, fn func(meter.Line) error) error {
			return store.Lines(ctx, env.Cluster, ledger.LineQuery{Booked: per("2031-02"), Ordered: ordered}, fn)
		}
		for _, f := range []export.Format{export.CSV, export.JSON, export.FOCUS} {
			for _, d := range []bool{false, true} {
				var b bytes.Buffer
				if err := export.Write(ctx, &b, m, lines, export.Options{Format: f, Detail: d}); err != nil {
					t.Fatal(err)
				}
				out[string(f)+map[bool]string{true: "-detail"}[d]] = b.Bytes()
				if f == export.FOCUS { // FOCUS 1.2's rules, with its metadata and the invoice total
					mb, err := export.MetadataJSON(m)
					if err != nil {
						t.Fatal(err)
					}
					exporttest.Conforms(t, "2031-02 "+string(f), b.Bytes(), exporttest.Options(m.Card, mb,
						map[string]string{export.InvoiceID(env.Cluster, m.Period): rec.Amount.String()}))
				}
			}
		}
		return out
	}
	before := exportAll()

	// Step 3, as of 2031-03-10: the running job ended on Mar 5; a February
	// record arrives late.
	if _, err := rw.Exec("UPDATE `"+env.Cluster+"_job_table` SET time_end = ?, state = ? WHERE id_job = ? AND time_submit = ?",
		ts("2031-03-05 00:00:00"), synth.StateCompleted, lo+2, ts("2031-02-26 23:00:00")); err != nil {
		t.Fatal(err)
	}
	late := row(20, "m4syn-b", "2031-02-20 00:00:00", "2031-02-20 00:00:00", "2031-02-20 05:00:00", h100(1))
	sy.Insert(late)
	now = time.Unix(ts("2031-03-10 00:00:00"), 0)
	res, err = in.Ingest(ctx, ingest.Window{From: time.Unix(ts("2031-02-01 00:00:00"), 0)})
	if err != nil {
		t.Fatal(err)
	}
	check("as of 2031-03-10", now.Unix())
	after := exportAll()
	for name := range before {
		if !bytes.Equal(before[name], after[name]) {
			t.Errorf("closed February's %s export changed:\n%s\n---\n%s", name, before[name], after[name])
		}
	}
	type booked struct {
		Job           uint32
		Usage, Booked string
		Rev           int
		Sec           int64
	}
	var lines []booked
	if err := db.Select(&lines, "SELECT job_id AS `job`, usage_period AS `usage`, booked_period AS `booked`, revision AS rev, gpu_seconds AS sec FROM usage_ledger WHERE job_id IN (?, ?) ORDER BY job_id, usage_period, revision", lo+2, lo+20); err != nil {
		t.Fatal(err)
	}
	wantLines := []booked{
		{lo + 2, "2031-02", "2031-02", 0, 2 * 86400}, // accrued to the end of February at step 1, final
		{lo + 2, "2031-03", "2031-03", 0, 4 * 86400}, // continued in March, once
		{lo + 20, "2031-02", "2031-03", 0, 5 * 3600}, // late: an adjustment in the open March
	}
	if d := cmp.Diff(wantLines, lines); d != "" {
		t.Errorf("running and late jobs (-want +got)\n%s", d)
	}
	if err := db.Get(&accrued, "SELECT COUNT(*) FROM usage_accrual WHERE job_id = ?", lo+2); err != nil || accrued != 0 {
		t.Errorf("%d accruals left for the ended job (%v)", accrued, err)
	}

}

// TestRESTSourceMatchesSQL reads the same synthetic rows (a month boundary,
// a requeue, a full GPU with a MIG slice, on-demand, a running job, a
// cancelled one) through slurmrestd and through slurm_acct_db: both ledgers
// must be the same, line for line.
func TestRESTSourceMatchesSQL(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	lo := uint32(synth.TestIDs + 10000)
	sy := acctest.NewSynth(t, env, lo, 10000, []string{"alice"}, "m4syn-a", "m4syn-b")
	ro := sy.RO
	row := func(id uint32, acct, submit, start, end string, gpus map[string]int) synth.Row {
		return sy.Row(id, acct, "alice", submit, start, end, gpus)
	}
	rows := []synth.Row{
		row(1, "m4syn-a", "2031-01-31 22:59:00", "2031-01-31 23:00:00", "2031-02-01 01:00:00", map[string]int{"h100": 2}),
		row(2, "m4syn-a", "2031-02-10 00:00:00", "2031-02-10 00:01:00", "2031-02-10 01:00:00", map[string]int{"1g.10gb": 1}),
		row(2, "m4syn-a", "2031-02-10 01:00:10", "2031-02-10 01:00:20", "2031-02-10 02:00:00", map[string]int{"1g.10gb": 1}),
		row(3, "m4syn-b", "2031-02-20 09:00:00", "2031-02-20 10:00:00", "2031-02-20 12:00:00", map[string]int{"h100": 1, "1g.10gb": 1}),
		row(4, "m4syn-b", "2031-02-22 09:00:00", "2031-02-22 10:00:00", "2031-02-22 11:00:00", map[string]int{"h100": 1}),
		row(5, "m4syn-b", "2031-02-03 00:00:00", "", "2031-02-03 01:00:00", map[string]int{"h100": 4}),
		row(6, "m4syn-a", "2031-02-26 23:00:00", "2031-02-27 00:00:00", "", map[string]int{"h100": 1}),
	}
	rows[1].State = synth.StateRequeued
	rows[4].Partition = "ondemand"
	rows[5].State = synth.StateCancelled
	rows[6].State = synth.StateRunning
	sy.Insert(rows...)
	now := time.Unix(ts("2031-03-10 00:00:00"), 0)
	from := ingest.Window{From: time.Unix(ts("2031-01-01 00:00:00"), 0)}
	src, err := ingest.NewSlurmDB(ro, env.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := acctest.ScratchDB(t, env, "viasql")
	viaSQL := &ingest.Ingester{Cluster: env.Cluster, Source: src, Ledger: ledger.NewDB(db, nil), Rules: rules, Clock: func() time.Time { return now }, UseHostClock: true}
	if _, err := viaSQL.Ingest(ctx, from); err != nil {
		t.Fatal(err)
	}
	cl, err := slurmrest.New(ctx, slurmrest.Options{URL: env.RestURL, JWTKeyFile: env.JWTKeyFile, User: env.RestUser, Cluster: env.Cluster})
	if err != nil {
		t.Fatal(err)
	}
	db2, _ := acctest.ScratchDB(t, env, "viarest")
	rest := ingest.NewREST(cl, env.Cluster)
	viaREST := &ingest.Ingester{Cluster: env.Cluster, Source: rest, Ledger: ledger.NewDB(db2, nil), Rules: rules, Clock: func() time.Time { return now }, UseHostClock: true}
	if _, err := viaREST.Ingest(ctx, from); err != nil {
		t.Fatalf("ingest through slurmrestd: %v\n(slurmdbd clips job times to the query window unless asked not to: "+
			"internal/slurmrest's DBJobFilter needs a field that sends disable_truncate_usage_time=true, and the REST source must set it)", err)
	}
	like := "m4syn-%"
	sqlSums, restSums := acctest.RunSums(t, db, env.Cluster, like), acctest.RunSums(t, db2, env.Cluster, like)
	if len(sqlSums) == 0 {
		t.Fatal("nothing ingested from slurm_acct_db")
	}
	if d := cmp.Diff(sqlSums, restSums); d != "" {
		var accts []string
		_ = db2.Select(&accts, "SELECT CONCAT(account, '/', user_name, ':', COUNT(*)) FROM usage_ledger GROUP BY account, user_name")
		t.Errorf("slurmrestd vs slurm_acct_db (-sql +rest)\n%s\nslurmrestd ledger accounts: %v", d, accts)
	}
	t.Logf("slurmrestd: %d calls, %d run keys", rest.Calls, len(restSums))
}
