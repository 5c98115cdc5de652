package archtest

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// pure lists the domain packages that must stay free of I/O. A package
// listed here but not yet present is ignored, so the list can lead the code.
var pure = []string{
	"bridge/tenant",
	"bridge/reconcile",
	"bridge/burst",
	"bridge/slurmconf",
	"bridge/reserve",
	"bridge/reserve/reservetest",
	"accounting/pricing",
	"accounting/meter",
	"gres/inventory",
	"gres/mig",
	"gres/conf",
	"internal/config",
	"internal/table",
	"internal/kv",
	"internal/slurmstr",
	"internal/money",
}

// forbidden are import-path prefixes a pure package may not depend on.
var forbidden = []string{
	"net/http",
	"database/sql",
	"github.com/jmoiron/sqlx",
	"github.com/go-sql-driver/mysql",
	"github.com/NVIDIA/go-nvml",
	"os/exec",
	"github.com/gpubridge/gpubridge/bridge/slurmrest",
	"github.com/gpubridge/gpubridge/accounting/ledger",
	"github.com/gpubridge/gpubridge/accounting/ingest",
	"github.com/gpubridge/gpubridge/gres/device",
	"github.com/gpubridge/gpubridge/internal/sqldb",
}

func TestDependencyDirection(t *testing.T) {
	for _, p := range pure {
		out, err := exec.Command("go", "list", "-deps", "-json=ImportPath", "../../"+p).Output()
		if err != nil {
			if strings.Contains(string(exitStderr(err)), "matched no packages") || strings.Contains(string(exitStderr(err)), "no Go files") || strings.Contains(string(exitStderr(err)), "directory not found") || strings.Contains(string(exitStderr(err)), "cannot find") {
				continue
			}
			t.Fatalf("go list %s: %v: %s", p, err, exitStderr(err))
		}
		dec := json.NewDecoder(strings.NewReader(string(out)))
		for dec.More() {
			var pkg struct{ ImportPath string }
			if err := dec.Decode(&pkg); err != nil {
				t.Fatal(err)
			}
			for _, f := range forbidden {
				if pkg.ImportPath == f || strings.HasPrefix(pkg.ImportPath, f+"/") {
					t.Errorf("%s (pure) depends on %s; move that code to an adapter", p, pkg.ImportPath)
				}
			}
		}
	}
}

func exitStderr(err error) []byte {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.Stderr
	}
	return nil
}
