//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/export/exporttest"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"

	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
	"github.com/gpubridge/gpubridge/test/bench/synth"
)

// runCode runs gpubridge in-process and returns its exit code and output.
func runCode(args ...string) (int, string, string) {
	var out, errw bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errw)
	return code, out.String(), errw.String()
}

// TestChargebackCLI drives the accounting commands on the testbed with a
// scratch ledger database: rate card commands, ingest, show usage, a close
// blocked by a GPU type without a rate (listed), the close, and the closed
// month's export staying byte-identical after the rate card changes.
func TestChargebackCLI(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	// A scratch copy of gpubridge's database.
	cfg, err := mysql.ParseDSN(env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sqldb.Open(ctx, env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = fmt.Sprintf("gpubridge_m4_cli_%06d", rand.IntN(1e6))
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

	// Synthetic March 2025 jobs of account m4syn-cli: an H100 hour, two
	// hours of a MIG slice, two untyped GPUs for two hours.
	rw, err := sqldb.Open(ctx, env.BenchDBDSN)
	if err != nil {
		t.Fatal(err)
	}
	lo := uint32(synth.TestIDs + 20000)
	if _, err := synth.Delete(ctx, rw, env.Cluster, lo, lo+100); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := synth.Delete(context.Background(), rw, env.Cluster, lo, lo+100); err != nil {
			t.Errorf("remove the synthetic rows: %v", err)
		}
		rw.Close()
	})
	tres, err := synth.LoadTRES(ctx, rw)
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) int64 {
		v, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return v.Unix()
	}
	row := func(id uint32, day string, hours int64, gpus map[string]int) synth.Row {
		s := at("2025-03-" + day + " 10:00:00")
		return synth.Row{JobID: lo + id, Account: "m4syn-cli", Partition: "pool", Submit: s - 60, Start: s, End: s + hours*3600,
			State: synth.StateCompleted, TRES: tres.Alloc(4, gpus)}
	}
	if err := synth.Insert(ctx, rw, env.Cluster, []synth.Row{
		row(1, "10", 1, map[string]int{"h100": 1}),
		row(2, "11", 2, map[string]int{"": 2}),
		row(3, "12", 2, map[string]int{"1g.10gb": 1}),
	}); err != nil {
		t.Fatal(err)
	}

	ok := func(args ...string) string {
		t.Helper()
		code, out, errs := runCode(args...)
		if code != 0 {
			t.Fatalf("gpubridge %s: exit %d: %s", strings.Join(args, " "), code, errs)
		}
		return out
	}
	ok("add", "rate", "type=h100", "tier=reserved", "price=2.10", "from=2020-01-01", "currency=EUR")
	ok("add", "gputype", "name=1g.10gb", "parent=h100")
	if out := ok("show", "rates", "-P"); !strings.Contains(out, "1g.10gb|reserved|0.30|EUR|2020-01-01|h100 x 1/7|gpu-1g.10gb-reserved") {
		t.Errorf("show rates:\n%s", out)
	}
	if out := ok("ingest", "from=2025-03-01", "to=2025-04-01"); !strings.Contains(out, "ledger lines written") {
		t.Errorf("ingest: %s", out)
	}
	out := ok("show", "usage", "period=2025-03", "tenant=m4syn-cli", "-P")
	for _, want := range []string{"|m4syn-cli|gpu|reserved|usage|2025-03|4.000000|14400|no rate|-|", "|m4syn-cli|h100|reserved|usage|2025-03|1.000000|3600|2.10|2.10|EUR"} {
		if !strings.Contains(out, want) {
			t.Errorf("show usage lacks %q:\n%s", want, out)
		}
	}

	// start= and end= show the months between, each with its rows; the
	// filters and format= select among them.
	out = ok("show", "usage", "start=2025-02", "end=2025-04", "tenant=m4syn-cli", "where", "gputype=h100,gpu,*", "format=period,gputype,kind,gpuseconds,rate,amount")
	t.Logf("$ gpubridge show usage start=2025-02 end=2025-04 tenant=m4syn-cli where gputype=h100,gpu,* format=period,gputype,kind,gpuseconds,rate,amount\n%s", out)
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	for _, want := range []string{"2025-03 h100 usage 3600 2.10 2.10", "2025-03 gpu usage 14400 no rate -", "2025-02 * total 0 0.00"} {
		if !slices.Contains(lines, want) {
			t.Errorf("show usage start= end= lacks %q:\n%s", want, out)
		}
	}

	// A month that has not ended, then a type without a rate, block the close.
	if code, _, errs := runCode("-i", "close", "period="+time.Now().UTC().Format("2006-01")); code != 2 || !strings.Contains(errs, "has not ended") {
		t.Errorf("close of the current month: exit %d: %s", code, errs)
	}
	code, _, errs := runCode("-i", "close", "period=2025-03")
	if code != 1 || !strings.Contains(errs, "no rate for GPU type(s): gpu (reserved: 14400 GPU-seconds in 1 line(s))") {
		t.Fatalf("close with an unpriced type: exit %d: %s", code, errs)
	}
	ok("add", "rate", "type=gpu", "price=1.00", "from=2020-01-01")
	if out := ok("-i", "close", "period=2025-03"); !strings.Contains(out, "closed 2025-03") {
		t.Errorf("close: %s", out)
	}
	csvExport := func() string {
		return ok("export", "chargeback", "period=2025-03", "format=csv", "tenant=m4syn-cli")
	}
	before := csvExport()
	for _, want := range []string{
		"line,2025-03,closed,testbed,(no tenant),false,,,,m4syn-cli,1g.10gb,reserved,usage,2025-03,7200,2.000000,0,0.000000,0.30,h100 x 1/7,EUR,0.60,1,",
		"line,2025-03,closed,testbed,(no tenant),false,,,,m4syn-cli,gpu,reserved,usage,2025-03,14400,4.000000,0,0.000000,1.00,gpu,EUR,4.00,1,",
		"line,2025-03,closed,testbed,(no tenant),false,,,,m4syn-cli,h100,reserved,usage,2025-03,3600,1.000000,0,0.000000,2.10,h100,EUR,2.10,1,",
		"subtotal,2025-03,closed,testbed,(no tenant),false,,,,m4syn-cli,,,,,25200,7.000000,0,0.000000,,,EUR,6.70,3,",
		"total,2025-03,closed,testbed,,,,,,,,,,,25200,7.000000,0,0.000000,,,EUR,6.70,3,",
	} {
		if !strings.Contains(before, want) {
			t.Errorf("export lacks %q:\n%s", want, before)
		}
	}
	// The FOCUS file of the closed month, with its metadata beside it and
	// the site's names: it conforms to FOCUS 1.2, its SkuPriceIds are in
	// the price list `show ratecard` prints, its BilledCost sums to the
	// JSON total.
	t.Setenv("GPUBRIDGE_PROVIDER_NAME", "Research Computing (test)")
	shown := ok("show", "ratecard")
	t.Logf("$ gpubridge show ratecard\n%s", shown)
	card, err := pricing.ParseYAML([]byte(shown))
	if err != nil {
		t.Fatalf("show ratecard does not load back: %v", err)
	}
	dir := t.TempDir()
	focusFile := filepath.Join(dir, "2025-03.csv")
	ok("export", "chargeback", "period=2025-03", "format=focus", "file="+focusFile)
	var total struct {
		Total struct{ Amount string } `json:"total"`
	}
	if err := json.Unmarshal([]byte(ok("export", "chargeback", "period=2025-03", "format=json")), &total); err != nil {
		t.Fatal(err)
	}
	focusData, err := os.ReadFile(focusFile)
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(focusFile + export.MetadataSuffix)
	if err != nil {
		t.Fatalf("no metadata beside the FOCUS file: %v", err)
	}
	t.Logf("FOCUS file (%d bytes), first rows:\n%s\nmetadata:\n%s", len(focusData), strings.Join(strings.SplitN(string(focusData), "\n", 4)[:3], "\n"), md)
	exporttest.Conforms(t, "2025-03 FOCUS", focusData, exporttest.Options(card, md, map[string]string{export.InvoiceID(env.Cluster, per("2025-03")): total.Total.Amount}))
	if !strings.Contains(string(focusData), ",Research Computing (test),Research Computing (test),") {
		t.Errorf("FOCUS file without the configured provider name:\n%s", focusData)
	}
	if code, _, errs := runCode("export", "chargeback", "period=2025-03", "format=csv", "metadata="+filepath.Join(dir, "x.json")); code != 2 || !strings.Contains(errs, "format=focus only") {
		t.Errorf("metadata= of a CSV export: exit %d: %s", code, errs)
	}

	// The rate card changes; the closed month's export does not.
	ok("add", "rate", "type=h100", "tier=reserved", "price=9.99", "from=2020-01-01")
	if after := csvExport(); after != before {
		t.Errorf("closed export changed:\n%s\n---\n%s", before, after)
	}
	if code, _, errs := runCode("-i", "close", "period=2025-03"); code != 1 || !strings.Contains(errs, "already closed") {
		t.Errorf("second close: exit %d: %s", code, errs)
	}
	for _, f := range []string{"json", "focus"} {
		if out := ok("export", "chargeback", "period=2025-03", "format="+f, "detail=jobs", "tenant=m4syn-cli"); !strings.Contains(out, "m4syn-cli") {
			t.Errorf("export %s:\n%s", f, out)
		}
	}
	ok("export", "chargeback", "period=2025-03", "format=focus", "file="+focusFile)
	if after, _ := os.ReadFile(focusFile); string(after) != string(focusData) {
		t.Error("the closed month's FOCUS file changed with the rate card")
	}
	if after, _ := os.ReadFile(focusFile + export.MetadataSuffix); string(after) != string(md) {
		t.Error("the closed month's FOCUS metadata changed")
	}
}

func per(s string) meter.Period {
	p, err := meter.ParsePeriod(s)
	if err != nil {
		panic(err)
	}
	return p
}
