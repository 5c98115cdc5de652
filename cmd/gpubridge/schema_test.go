package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/check"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
	"github.com/gpubridge/gpubridge/internal/money"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/table"
)

// schemaDir holds the JSON Schema of every command's --json output
// (docs/json.md), one file per command path: show nodes is show-nodes.json.
const schemaDir = "../../docs/schema"

var (
	schemaOnce     sync.Once
	schemaCompiler *jsonschema.Compiler
	schemaMu       sync.Mutex
)

// schemaFile is the schema file of a command path ("show nodes").
func schemaFile(path string) string {
	return filepath.Join(schemaDir, strings.ReplaceAll(path, " ", "-")+".json")
}

// compileSchema compiles the schema of a command path, with the formats
// (date-time) asserted.
func compileSchema(t *testing.T, path string) *jsonschema.Schema {
	t.Helper()
	schemaMu.Lock()
	defer schemaMu.Unlock()
	schemaOnce.Do(func() {
		schemaCompiler = jsonschema.NewCompiler()
		schemaCompiler.AssertFormat()
	})
	abs, err := filepath.Abs(schemaFile(path))
	if err != nil {
		t.Fatal(err)
	}
	s, err := schemaCompiler.Compile(abs)
	if err != nil {
		t.Fatalf("schema of %q: %v", path, err)
	}
	return s
}

// validateJSON checks out, a command's --json output, against its schema.
func validateJSON(t *testing.T, path string, out []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("%s --json is not JSON: %v\n%s", path, err, out)
	}
	if err := compileSchema(t, path).Validate(v); err != nil {
		t.Errorf("%s --json does not match %s: %v\n%s", path, schemaFile(path), err, out)
	}
}

// outputCommands are the command paths whose --json is a contract: every
// show and export, and the others that print records.
func outputCommands(root *cobra.Command) []string {
	paths := []string{"burst run-once", "check node", "health run-once", "config check", "config render", "ping",
		"gres inventory", "gres generate", "gres plan", "plan"}
	for _, verb := range []string{"show", "export"} {
		v, _, err := root.Find([]string{verb})
		if err != nil {
			continue
		}
		for _, c := range v.Commands() {
			if !c.Hidden && c.Name() != "help" {
				paths = append(paths, verb+" "+c.Name())
			}
		}
	}
	return paths
}

// TestJSONSchemasOfflineCommands runs the commands that need no cluster
// with --json and validates their output.
func TestJSONSchemasOfflineCommands(t *testing.T) {
	inv := gresFixture("testbed-gpu-b")
	for path, args := range map[string][]string{
		"gres inventory": {"--fixture", inv},
		"gres generate":  {"--fixture", inv, "--node", "gpu-b", "--device-map", "mig=/dev/fakemig", "--cores", "0=0-3,1=4-7"},
		"gres plan":      {"--model", "H100-80GB", "--gpus", "2", "--want", "h100=1,1g.10gb=3,3g.40gb=1"},
		"config render":  testbedFlags,
		"config check":   append([]string{"--scontrol", fakeScontrol(t, 1)}, testbedFlags...),
	} {
		t.Run(path, func(t *testing.T) {
			code, out, errw := cli(t, append(append(strings.Fields(path), args...), "--json")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errw)
			}
			validateJSON(t, path, []byte(out))
		})
	}
}

// TestEveryOutputHasASchema: each show and export command (and the other
// record printers) has its schema in docs/schema, and it compiles.
func TestEveryOutputHasASchema(t *testing.T) {
	paths := outputCommands(newRootCmd(&App{Env: &app.Env{}}))
	if len(paths) < 10 {
		t.Fatalf("only %d commands found: %v", len(paths), paths)
	}
	for _, p := range paths {
		if _, err := os.Stat(schemaFile(p)); err != nil {
			t.Errorf("%s: no schema (%v); write %s and describe it in docs/json.md", p, err, schemaFile(p))
			continue
		}
		compileSchema(t, p)
	}
}

// jsonOf writes t as --json does.
func jsonOf(t *testing.T, tb table.Table) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := table.Write(&b, table.Options{JSON: true}, tb); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestJSONSchemasOffline validates the --json of the views on data made
// here (the testbed test runs the commands themselves).
func TestJSONSchemasOffline(t *testing.T) {
	at := time.Date(2026, 11, 3, 8, 0, 0, 0, time.UTC)
	eur := pricing.Card{Version: 1, Currency: "EUR"}
	rate, _ := pricing.ParsePrice("2.10")
	p, _ := meter.ParsePeriod("2026-11")
	sum := export.Summary{Meta: export.Meta{Period: p, Card: eur}, Rows: []export.Row{
		{Key: export.Key{Tenant: "acme", Account: "acme", Type: "h100", Tier: meter.Reserved, Kind: meter.KindUsage, Usage: p, Rate: rate},
			HasTenant: true, GPUSeconds: 15, Lines: 1, Amount: money.New(1, money.Currency{Code: "EUR", Minor: 2})},
		{Key: export.Key{Tenant: "acme", Account: "acme", Type: "a100", Tier: meter.OnDemand, Kind: meter.KindAccrual, Usage: p, Rate: -1},
			HasTenant: true, GPUSeconds: 3600, Lines: 1},
	}, GPUSeconds: 3615}
	run := health.Run{ID: 1, Key: "k", Node: "gpu-a", Checks: []string{"xid"}, Purpose: health.PurposeAdmin, State: health.RunSubmitted, JobID: 9, RequestedAt: at}
	res := health.StoredResult{RunID: 1, Node: "gpu-a", Check: "xid", Verdict: check.Pass, Values: []check.Value{{Name: "x", Value: 1.5}},
		Start: at, End: at.Add(time.Minute), JobID: 9, Purpose: health.PurposeAdmin, At: at}
	before, after := `{"name":"acme"}`, `{"name":"acme","users":["alice"]}`
	ov := burst.Overview{Jobs: []burst.OverviewJob{{Tenant: "acme", JobID: 3, User: "alice", Status: "bursting", State: "RUNNING", GPUs: "h100:1", Since: at}},
		Tenants: []burst.OverviewTenant{{Tenant: "acme", Burst: true, Cap: 2, OnDemandGPUs: 1, Budget: "50.00", Spent: "1.00", InFlight: "0.50", Committed: "1.50", Left: "48.50"}}}
	cases := map[string][]byte{
		"show usage": jsonOf(t, export.UsageTable([]export.Summary{sum}, false)),
		"show nodes": jsonOf(t, slurmrest.NodesTable([]slurmrest.Node{{Name: "gpu-a", State: []string{"IDLE"},
			GRES: []slurmrest.GRES{{Name: "gpu", Type: "h100", Count: 4}}}, {Name: "cpu-a", State: []string{"IDLE", "DRAIN"}}})),
		"show burst":      jsonOf(t, table.Table{Raw: ov}),
		"show checks":     jsonOf(t, health.ResultsTable([]health.StoredResult{res})),
		"check node":      jsonOf(t, health.RunsTable([]health.Run{run})),
		"health run-once": jsonOf(t, health.ReportTable(health.Report{Schedule: "acceptance", At: at, Submitted: []health.Run{run}, Skipped: map[string]string{"gpu-b": "busy"}})),
		"show health": jsonOf(t, health.NodesTable([]health.NodeView{{Node: health.Node{Name: "gpu-a", State: health.Serving, Since: at, Needed: 1},
			Managed: true, SlurmState: "IDLE", Running: &run, Last: &res}})),
		"burst run-once": jsonOf(t, burst.CycleTable(burst.Result{Moved: []burst.Move{{Job: burst.Job{ID: 7, User: "alice"}, Tenant: "acme",
			GPUs: burst.Request{"h100": 1}}}}, false)),
		"show ingest": jsonOf(t, ledger.StateTable("tb", ledger.State{Watermarks: map[string]meter.Watermark{"slurmdb": {Source: "slurmdb", Through: at.Unix()}},
			AccrualsAsOf: at.Unix(), Passes: []meter.Pass{{Kind: meter.PassChanges, Source: "slurmdb", AsOf: at.Unix(), Finished: at.Unix()}}})),
		"show tokens": jsonOf(t, token.Table([]token.Token{{ID: 1, Name: "ci", Tenant: "acme", Scope: token.Read, CreatedAt: at, CreatedBy: "root", ExpiresAt: at.Add(time.Hour)},
			{ID: 2, Name: "ops", Scope: token.Admin, CreatedAt: at, CreatedBy: "root"}}, at)),
		"show audit": jsonOf(t, table.Table{Raw: []sqldb.AuditEntry{{ID: 1, At: at, Actor: "root", Action: "modify", ObjectKind: "tenant",
			ObjectName: "acme", Before: &before, After: &after}}}),
	}
	for path, out := range cases {
		t.Run(path, func(t *testing.T) { validateJSON(t, path, out) })
	}
	// The schemas are not empty promises: a number written as a string,
	// and a missing field, are refused.
	bad := map[string]string{
		"show usage": strings.Replace(string(cases["show usage"]), `"gpuSeconds": 15`, `"gpuSeconds": "15"`, 1),
		"show audit": strings.Replace(string(cases["show audit"]), `"before": {`, `"before": "{`, 1),
		"show nodes": strings.Replace(string(cases["show nodes"]), `"gpusUsed": 0`, `"gpusUsed": null`, 1),
	}
	for path, out := range bad {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
		if err != nil {
			continue // not JSON any more: refused too
		}
		if compileSchema(t, path).Validate(v) == nil {
			t.Errorf("%s: the schema accepts %s", path, out)
		}
	}
}
