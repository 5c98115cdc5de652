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

// Script runs the testbed script name (test/testbed/NAME, beside
// in-root.sh) with args, bounded by timeout, and returns its combined
// output.
func (e Env) Script(timeout time.Duration, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return exec.CommandContext(ctx, filepath.Join(filepath.Dir(e.ExecScript), name), args...).CombinedOutput()
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
	out, err := e.Script(5*time.Minute, "galera.sh", "up")
	if err != nil {
		t.Fatalf("galera.sh up: %v\n%s", err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
	return e, dsns
}

// RequireCluster2 starts the testbed's second cluster (test/testbed/cluster2.sh up,
// idempotent) and returns the environment; when the test ends the cluster
// is stopped and deleted from slurmdbd (cluster2.sh down), so that the
// first cluster's tests see one cluster again. It fails the test (never
// skips) when it cannot.
func RequireCluster2(t testing.TB) Env {
	t.Helper()
	e := Require(t)
	if e.Cluster2 == "" || e.Cluster2REST == "" || e.Cluster2Conf == "" {
		t.Fatal("GPUBRIDGE_TESTBED_CLUSTER2, _REST or _CONF is unset: rerun `make testbed-up` and `source .testbed/env`")
	}
	t.Cleanup(func() {
		if out, err := e.Script(3*time.Minute, "cluster2.sh", "down"); err != nil {
			t.Errorf("cluster2.sh down: %v\n%s", err, out)
		}
	})
	out, err := e.Script(3*time.Minute, "cluster2.sh", "up")
	if err != nil {
		t.Fatalf("cluster2.sh up: %v\n%s", err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
	return e
}
