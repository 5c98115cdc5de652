//go:build integration

package billing_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/export/exporttest"
	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/internal/acctest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/internal/testbed"
	"github.com/gpubridge/gpubridge/test/bench/synth"
)

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

// TestFOCUSExportsConform meters synthetic job rows of 2033 on the testbed
// (ids from synth.TestIDs+30000, accounts m4syn-f18a, a tenant, and
// m4syn-f18b, none) into a scratch ledger, closes January and February,
// lets a February record arrive late (an adjustment in March) with a job
// still running in March, then closes March. Every FOCUS export on the
// way, summary and detail=jobs, of the open March (adjustment, accrual),
// the closed months and the closed March with its adjustment, conforms to
// FOCUS 1.2 (focuscheck, with the metadata written beside the file and
// the price list); the BilledCost of a closed month's FOCUS export sums to
// the CSV and JSON totals and to the closed period's amount, to the cent;
// a closed month's FOCUS data and metadata stay byte-identical.
func TestFOCUSExportsConform(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	ro, rw := acctest.SlurmDB(t, env), acctest.Bench(t, env)
	lo := uint32(synth.TestIDs + 30000)
	if _, err := synth.Delete(ctx, rw, env.Cluster, lo, lo+10000); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := synth.Delete(context.Background(), rw, env.Cluster, lo, lo+10000); err != nil {
			t.Error(err)
		}
	})
	tres, err := synth.LoadTRES(ctx, rw)
	if err != nil {
		t.Fatal(err)
	}
	const a, b = "m4syn-f18a", "m4syn-f18b"
	row := func(id uint32, acct, start string, sec int64, gpus map[string]int) synth.Row {
		s := ts(start)
		r := synth.Row{JobID: lo + id, Account: acct, Partition: "pool", Submit: s - 30, Start: s, State: synth.StateCompleted, TRES: tres.Alloc(4, gpus)}
		if sec > 0 {
			r.End = s + sec
		} else {
			r.State = synth.StateRunning
		}
		return r
	}
	h100 := func(n int) map[string]int { return map[string]int{"h100": n} }
	rows := []synth.Row{
		row(1, a, "2033-01-05 10:00:00", 4567, h100(2)),
		row(2, a, "2033-01-06 10:00:00", 1234, map[string]int{"1g.10gb": 1}),
		row(3, a, "2033-01-07 10:00:00", 777, h100(1)), // on demand
		row(4, b, "2033-01-08 10:00:00", 3601, map[string]int{"3g.40gb": 2}),
		row(5, b, "2033-01-31 23:00:00", 6133, h100(1)), // into February
		row(6, a, "2033-02-10 10:00:00", 999, h100(1)),
		row(7, a, "2033-02-20 10:00:00", 5000, h100(3)), // after the rate change of 2033-02-15
		row(8, b, "2033-02-27 22:00:00", 0, map[string]int{"1g.10gb": 1, "h100": 1}),
	}
	rows[2].Partition = "ondemand"
	if err := synth.Insert(ctx, rw, env.Cluster, rows); err != nil {
		t.Fatal(err)
	}

	db, _ := acctest.ScratchDB(t, env, "focus18")
	store := ledger.NewDB(db, nil)
	src, err := ingest.NewSlurmDB(ro, env.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	var now time.Time
	clock := func() time.Time { return now }
	in := &ingest.Ingester{Cluster: env.Cluster, Source: src, Ledger: store, Clock: clock, UseHostClock: true,
		Rules: meter.TierRules{OnDemandPartition: "ondemand", OnDemandQOS: "ondemand"}}
	ingestFrom := func(from string) {
		t.Helper()
		if _, err := in.Ingest(ctx, ingest.Window{From: time.Unix(ts(from), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	cards := ratecard.NewDB(db)
	labels := func(context.Context) (ledger.Labeler, error) { return ledger.Labels{a: a}, nil }
	books := billing.Books{Cluster: env.Cluster, Ledger: store, Cards: cards, Labels: labels, Clock: clock,
		Parties: export.Parties{Provider: "Research Computing (test)", InvoiceIssuer: "Finance (test)"}}
	closer := billing.Closer{Cluster: env.Cluster, Ledger: store, Cards: cards, Labels: labels, Clock: clock}
	dir := t.TempDir()

	// exportAll writes every format of period p (FOCUS with its metadata)
	// and checks the FOCUS ones; it returns the files' bytes by name.
	exportAll := func(p string) map[string][]byte {
		t.Helper()
		out := map[string][]byte{}
		rec, closed, err := store.Period(ctx, env.Cluster, per(p))
		if err != nil {
			t.Fatal(err)
		}
		card := rec.Snapshot.Card
		if !closed {
			card, _, _ = cards.Current(ctx)
		}
		var inv map[string]string
		if closed {
			inv = map[string]string{export.InvoiceID(env.Cluster, per(p)): rec.Amount.String()}
		}
		for _, f := range []export.Format{export.CSV, export.JSON, export.FOCUS} {
			for _, d := range []bool{false, true} {
				name := p + "-" + string(f) + map[bool]string{true: "-detail"}[d]
				path := filepath.Join(dir, name)
				if err := books.Export(ctx, billing.ExportRequest{Period: per(p), Options: export.Options{Format: f, Detail: d}, Path: path}, nil); err != nil {
					t.Fatal(err)
				}
				out[name] = readFile(t, path)
				if f == export.FOCUS {
					out[name+".metadata"] = readFile(t, path+export.MetadataSuffix)
					exporttest.Conforms(t, name, out[name], exporttest.Options(card, out[name+".metadata"], inv))
				}
			}
		}
		if closed {
			total := rec.Amount.String()
			sums := map[string]string{
				"FOCUS BilledCost":        sumColumn(t, out[p+"-focus"], "BilledCost"),
				"FOCUS detail BilledCost": sumColumn(t, out[p+"-focus-detail"], "BilledCost"),
				"CSV amount":              sumColumn(t, out[p+"-csv"], "amount"),
				"CSV detail amount":       sumColumn(t, out[p+"-csv-detail"], "amount"),
				"JSON total":              jsonTotal(t, out[p+"-json"]),
			}
			for what, s := range sums {
				if s != total {
					t.Errorf("%s: %s sums to %s, the closed period to %s", p, what, s, total)
				}
			}
			t.Logf("%s closed at %s: %d FOCUS rows, %d detail rows, BilledCost %s = CSV = JSON = closed amount", p, rec.ClosedAt.Format(time.RFC3339),
				bytes.Count(out[p+"-focus"], []byte("\n"))-1, bytes.Count(out[p+"-focus-detail"], []byte("\n"))-1, total)
		}
		return out
	}

	// Step 1, as of 2033-03-02: January and February read and closed.
	now = time.Unix(ts("2033-03-02 00:00:00"), 0)
	ingestFrom("2033-01-01 00:00:00")
	card := cardFor(t, db)
	if err := cards.Save(ctx, card, "test", now); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"2033-01", "2033-02"} {
		if _, err := closer.Close(ctx, billing.CloseOptions{Period: per(p), Actor: "test"}); err != nil {
			t.Fatalf("close %s: %v", p, err)
		}
	}
	jan, feb := exportAll("2033-01"), exportAll("2033-02")
	if !bytes.Contains(feb["2033-02-focus-detail"], []byte(",2033-02-15T00:00:00Z,")) {
		t.Errorf("February's detail has no line priced at the rate of 2033-02-15")
	}

	// Step 2, as of 2033-03-10: a February record arrives late; the
	// running job ended on March 3; another runs.
	late := []synth.Row{
		row(9, b, "2033-02-12 10:00:00", 1800+7, h100(1)),
		row(10, a, "2033-03-04 10:00:00", 2345, map[string]int{"3g.40gb": 1}),
		row(11, a, "2033-03-09 20:00:00", 0, h100(2)),
	}
	if err := synth.Insert(ctx, rw, env.Cluster, late); err != nil {
		t.Fatal(err)
	}
	if _, err := rw.Exec("UPDATE `"+env.Cluster+"_job_table` SET time_end = ?, state = ? WHERE id_job = ? AND time_submit = ?",
		ts("2033-03-03 01:02:03"), synth.StateCompleted, lo+8, ts("2033-02-27 22:00:00")-30); err != nil {
		t.Fatal(err)
	}
	now = time.Unix(ts("2033-03-10 00:00:00"), 0)
	ingestFrom("2033-02-01 00:00:00")
	march := exportAll("2033-03") // open: usage, an adjustment, an accrual
	for _, want := range []string{",Correction,", ",accrual,", ",adjustment,"} {
		if !bytes.Contains(march["2033-03-focus-detail"], []byte(want)) {
			t.Errorf("open March's FOCUS detail has no %q row", want)
		}
	}
	if bytes.Contains(march["2033-03-focus"], []byte(","+export.InvoiceID(env.Cluster, per("2033-03"))+",")) {
		t.Error("open March has an InvoiceId")
	}
	for name, got := range map[string]map[string][]byte{"2033-01": exportAll("2033-01"), "2033-02": exportAll("2033-02")} {
		before := map[string]map[string][]byte{"2033-01": jan, "2033-02": feb}[name]
		for f := range before {
			if !bytes.Equal(before[f], got[f]) {
				t.Errorf("closed %s: %s changed after a later ingest", name, f)
			}
		}
	}

	// Step 3, as of 2033-04-02: the running job ended; March closed with
	// its adjustment.
	if _, err := rw.Exec("UPDATE `"+env.Cluster+"_job_table` SET time_end = ?, state = ? WHERE id_job = ? AND time_submit = ?",
		ts("2033-03-20 00:00:00"), synth.StateCompleted, lo+11, ts("2033-03-09 20:00:00")-30); err != nil {
		t.Fatal(err)
	}
	now = time.Unix(ts("2033-04-02 00:00:00"), 0)
	ingestFrom("2033-03-01 00:00:00")
	if _, err := closer.Close(ctx, billing.CloseOptions{Period: per("2033-03"), Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	closedMarch := exportAll("2033-03")
	if !bytes.Contains(closedMarch["2033-03-focus"], []byte(",Correction,")) ||
		!bytes.Contains(closedMarch["2033-03-focus"], []byte(","+export.InvoiceID(env.Cluster, per("2033-03"))+",")) {
		t.Errorf("closed March lacks its correction or its InvoiceId:\n%s", closedMarch["2033-03-focus"])
	}
	now = time.Unix(ts("2033-05-17 00:00:00"), 0)
	again := exportAll("2033-03")
	for f := range closedMarch {
		if !bytes.Equal(closedMarch[f], again[f]) {
			t.Errorf("closed March: %s differs when exported later", f)
		}
	}
}

// cardFor prices every GPU type in the ledger: h100 with a reserved rate
// change on 2033-02-15, its MIG profiles from it (2.00 / 7 does not end),
// anything else (other people's rows in the window) at 1.00.
func cardFor(t *testing.T, db *sqlx.DB) pricing.Card {
	t.Helper()
	var types []string
	if err := db.Select(&types, "SELECT DISTINCT gpu_type FROM usage_ledger UNION SELECT DISTINCT gpu_type FROM usage_accrual"); err != nil {
		t.Fatal(err)
	}
	y := "version: 1\ncurrency: EUR\ntypes:\n  - {name: 1g.10gb, parent: h100}\n  - {name: 3g.40gb, parent: h100}\nrates:\n" +
		"  - {type: h100, tier: reserved, perGPUHour: \"2.10\", from: 2020-01-01}\n" +
		"  - {type: h100, tier: reserved, perGPUHour: \"2.00\", from: 2033-02-15}\n" +
		"  - {type: h100, tier: ondemand, perGPUHour: \"3.50\", from: 2020-01-01}\n" +
		"  - {type: gpu, perGPUHour: \"1.00\", from: 2020-01-01}\n"
	for _, typ := range types {
		if typ != "h100" && typ != "1g.10gb" && typ != "3g.40gb" && typ != "gpu" {
			y += "  - {type: \"" + typ + "\", perGPUHour: \"1.00\", from: 2020-01-01}\n"
		}
	}
	c, err := pricing.ParseYAML([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sumColumn adds up a decimal column of a CSV file exactly.
func sumColumn(t *testing.T, data []byte, col string) string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	i := -1
	for j, c := range recs[0] {
		if c == col {
			i = j
		}
	}
	if i < 0 {
		t.Fatalf("no column %s", col)
	}
	rowType := slices.Index(recs[0], "row_type") // the CSV's; FOCUS has none
	sum := new(big.Rat)
	for _, r := range recs[1:] {
		if rowType >= 0 && r[rowType] != export.RowLine {
			if r[rowType] == export.RowTotal && col == "amount" && r[i] != total(t, recs, i, rowType) {
				t.Errorf("the CSV's total row says %s, its lines add up to %s", r[i], total(t, recs, i, rowType))
			}
			continue // subtotals and the total repeat the lines' sums
		}
		v, ok := new(big.Rat).SetString(r[i])
		if !ok {
			t.Fatalf("%s = %q is not a number", col, r[i])
		}
		sum.Add(sum, v)
	}
	return sum.FloatString(2)
}

// total is the sum of column i over the line rows of a CSV export.
func total(t *testing.T, recs [][]string, i, rowType int) string {
	sum := new(big.Rat)
	for _, r := range recs[1:] {
		if r[rowType] == export.RowLine {
			v, ok := new(big.Rat).SetString(r[i])
			if !ok {
				t.Fatalf("%q is not a number", r[i])
			}
			sum.Add(sum, v)
		}
	}
	return sum.FloatString(2)
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func jsonTotal(t *testing.T, data []byte) string {
	t.Helper()
	var v struct {
		Total struct {
			Amount string `json:"amount"`
		} `json:"total"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(v.Total.Amount, ".") {
		t.Fatalf("JSON total %q", v.Total.Amount)
	}
	return v.Total.Amount
}
