package testbed

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// GaleraDSNs are the DSNs of gpubridge's database on each node of the
// testbed's Galera cluster (GPUBRIDGE_GALERA_DSNS), in node order.
func (e Env) GaleraDSNs() []string {
	v := os.Getenv("GPUBRIDGE_GALERA_DSNS")
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// RequireGalera brings the testbed's three-node Galera cluster up if it is
// not (test/testbed/galera.sh up, idempotent: about 20 s the first time
// after a testbed restart) and returns one DSN per node; it fails the test
// (never skips) when it cannot.
func RequireGalera(t testing.TB) (Env, []string) {
	t.Helper()
	e := Require(t)
	dsns := e.GaleraDSNs()
	if len(dsns) != 3 {
		t.Fatalf("GPUBRIDGE_GALERA_DSNS = %q: want three DSNs; rerun `make testbed-up` and `source .testbed/env`", os.Getenv("GPUBRIDGE_GALERA_DSNS"))
	}
	script := filepath.Join(filepath.Dir(e.ExecScript), "galera.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, script, "up").CombinedOutput()
	if err != nil {
		t.Fatalf("%s up: %v\n%s", script, err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
	return e, dsns
}
