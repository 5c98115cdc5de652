//go:build integration

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"

	"github.com/gpubridge/gpubridge/bridge/reserve/store/storetest"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestOutputContractOnTestbed runs every show and export command (and the
// other record printers) on the testbed, on a scratch database holding a
// tenant of its own, a rate card and the last hour's ingest: --json must
// match the command's schema in docs/schema, and -P and -p print the same
// table (-p with a '|' after every line), every line as wide as the header.
func TestOutputContractOnTestbed(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	sc, err := storetest.New(ctx, env.DBDSN, "gpubridge_jsonit")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sc.Close() })
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gpubridge.yaml")
	if err := os.WriteFile(cfg, []byte("version: 1\nhealth:\n  nodes: [gpu-a]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	card := filepath.Join(dir, "rates.yaml")
	if err := os.WriteFile(card, []byte("version: 1\ncurrency: EUR\ntypes:\n  - {name: 1g.10gb, parent: h100}\n  - {name: 3g.40gb, parent: h100}\nrates:\n"+
		"  - {type: h100, tier: reserved, perGPUHour: \"2.10\", from: 2020-01-01}\n  - {type: h100, tier: ondemand, perGPUHour: \"3.50\", from: 2020-01-01}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GPUBRIDGE_CONFIG", cfg)
	t.Setenv("GPUBRIDGE_DB_DSN", sc.DSN)
	tenantName := fmt.Sprintf("jsonit%d", rand.IntN(1_000_000))
	period := time.Now().UTC().Format("2006-01")
	for _, args := range [][]string{
		{"-i", "add", "tenant", tenantName, "gpus=h100:1", "users=alice", "description=json contract"},
		{"-i", "modify", "tenant", tenantName, "set", "gpus=h100:2"},
		{"-i", "load", "ratecard", "-f", card},
		{"ingest", "from=" + time.Now().UTC().Add(-time.Hour).Format("2006-01-02T15:04:05")},
	} {
		if code, out, errw := runCode(args...); code != 0 {
			t.Fatalf("gpubridge %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errw)
		}
	}
	start := time.Now().UTC().Truncate(time.Hour).Add(2 * time.Hour)
	from, to := start.Format(time.RFC3339), start.Add(24*time.Hour).Format(time.RFC3339)
	// Each command path with the arguments it needs here.
	args := map[string][]string{
		"show usage":          {"period=" + period},
		"show tenants":        {tenantName},
		"show audit":          {"name=" + tenantName},
		"export chargeback":   {"period=" + period},
		"config check":        {"--scontrol", env.ExecScript + " scontrol"},
		"show booking-policy": {"tenant=" + tenantName},
		// A fixed window: the default one starts at now, which moves between the -P and -p runs.
		"show availability": {"from=" + from, "to=" + to},
	}
	noTable := map[string]bool{"export chargeback": true, "ping": true, "config render": true, "plan": true}
	for _, path := range outputCommands(newRootCmd(&App{Env: &app.Env{}})) {
		switch path {
		case "check node", "health run-once", "burst run-once":
			continue // they act on the cluster; their --json is validated offline (TestJSONSchemasOffline)
		case "gres inventory", "gres generate", "gres plan":
			continue // NVML on a GPU node; validated on fixtures (TestJSONSchemasOfflineCommands)
		}
		t.Run(path, func(t *testing.T) {
			cmd := append(strings.Fields(path), args[path]...)
			code, out, errw := runCode(append(cmd, "--json")...)
			if path == "plan" && code == 1 && strings.Contains(errw, "mass deletion") {
				code = 0 // the scratch store knows none of the testbed's other tenants: the plan is refused, and printed
			}
			if code != 0 {
				t.Fatalf("%s --json: exit %d\n%s%s", path, code, out, errw)
			}
			validateJSON(t, path, []byte(out))
			if path == "show audit" {
				t.Logf("%s --json:\n%s", path, out)
			}
			if noTable[path] {
				return
			}
			codeP, outP, errP := runCode(append(cmd, "-P")...)
			codeT, outT, errT := runCode(append(cmd, "-p")...)
			if codeP != 0 || codeT != 0 {
				t.Fatalf("-P: exit %d %s; -p: exit %d %s", codeP, errP, codeT, errT)
			}
			lp, lt := strings.Split(strings.TrimSuffix(outP, "\n"), "\n"), strings.Split(strings.TrimSuffix(outT, "\n"), "\n")
			if len(lp) != len(lt) || len(lp) == 0 || lp[0] == "" {
				t.Fatalf("-P and -p differ in lines:\n%s\n--\n%s", outP, outT)
			}
			width := strings.Count(lp[0], "|")
			for i := range lp {
				if lt[i] != lp[i]+"|" {
					t.Errorf("line %d: -p %q is not -P %q with a trailing '|'", i, lt[i], lp[i])
				}
				if strings.Count(lp[i], "|") != width {
					t.Errorf("line %d %q: %d fields, the header has %d", i, lp[i], strings.Count(lp[i], "|")+1, width+1)
				}
			}
			t.Logf("%s -P:\n%s", path, outP)
		})
	}
}
