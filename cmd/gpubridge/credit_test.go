package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/bridge/health/credit"
	"github.com/gpubridge/gpubridge/internal/money"
)

// TestCreditRunOnceArgs: what was typed is refused before anything
// connects (exit 2), and so is a run while health.credits is off.
func TestCreditRunOnceArgs(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		err  string
	}{
		"no subcommand": {[]string{"credit"}, "credit needs a subcommand: run-once"},
		"bare word":     {[]string{"credit", "run-once", "acme"}, `unexpected "acme"`},
		"bad lookback":  {[]string{"credit", "run-once", "lookback=soon"}, "lookback=soon: want a duration such as 7d or 36h"},
		"unknown key":   {[]string{"credit", "run-once", "tenant=acme"}, "tenant"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errw := cli(t, tc.args...)
			if code != 2 || !strings.Contains(errw, tc.err) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errw, tc.err)
			}
		})
	}
	conf := filepath.Join(t.TempDir(), "off.yaml")
	if err := os.WriteFile(conf, []byte("version: 1\nhealth:\n  credits: {enabled: false}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errw := cli(t, "--config", conf, "credit", "run-once")
	if code != 2 || !strings.Contains(errw, "health.credits.enabled is false") {
		t.Errorf("credits off: exit %d, stderr %q", code, errw)
	}
}

// TestCreditJSONSchemas: credit run-once's --json, and show usage with a
// credit row, match their schemas; a positive credit does not.
func TestCreditJSONSchemas(t *testing.T) {
	eur := money.Currency{Code: "EUR", Minor: 2}
	at := time.Date(2026, 11, 3, 8, 0, 0, 0, time.UTC)
	rep := credit.Report{Written: []credit.Credit{
		{Key: "health-credit:job:testbed:42:1793613600", Kind: credit.NodeFail, Tenant: "acme", Account: "acme", Amount: money.New(-420, eur),
			EventID: 7, Node: "gpu-a", JobID: 42, Submit: at, Reason: "job ended NODE_FAIL"},
		{Key: "health-credit:booking:5:event:3", Kind: credit.BookingLost, Tenant: "beta", Amount: money.New(-100, eur), BookingID: 5, Node: "gpu-b"},
	}}
	out := jsonOf(t, credit.ReportTable(rep))
	validateJSON(t, "credit run-once", out)
	p, _ := meter.ParsePeriod("2026-11")
	sum := export.Summary{Meta: export.Meta{Period: p, Card: pricing.Card{Version: 1, Currency: "EUR"}}, Rows: []export.Row{
		{Key: export.Key{Tenant: "acme", Account: "acme", Kind: meter.KindCredit, Usage: p}, HasTenant: true, Lines: 1, Amount: money.New(-420, eur)},
	}}
	usage := jsonOf(t, export.UsageTable([]export.Summary{sum}, false))
	validateJSON(t, "show usage", usage)
	if !strings.Contains(string(usage), `"rate": null`) || !strings.Contains(string(usage), `"kind": "credit"`) {
		t.Errorf("show usage credit row: %s", usage)
	}
}
