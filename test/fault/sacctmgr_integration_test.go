//go:build integration

package fault_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reconcile/slurmadapter"
	"github.com/gpubridge/gpubridge/internal/sacctmgr"
	"github.com/gpubridge/gpubridge/internal/testbed"
	"github.com/gpubridge/gpubridge/test/fault"
)

// TestFaultSlurmdbdKilledAtSacctmgrLoad: with reconcile.sacctmgr, slurmdbd
// is killed (SIGKILL) as the first load of the users' associations starts
// (a wrapper around sacctmgr kills it once, then runs sacctmgr). The loads
// fail, the fallback through slurmrestd fails too, and the apply returns
// an error instead of claiming success; with slurmdbd back, one apply
// converges to exactly the tenants (no duplicate, no half-made user) and
// the next one makes nothing.
func TestFaultSlurmdbdKilledAtSacctmgrLoad(t *testing.T) {
	env := testbed.Require(t)
	dbd := fault.NewDaemon(t, env, "slurmdbd")
	h := newApplyIT(t, "fltm", nil)
	mark := filepath.Join(t.TempDir(), "killed")
	daemon := filepath.Join(filepath.Dir(env.ExecScript), "daemon.sh")
	r := &sacctmgr.Runner{Cluster: env.Cluster, Timeout: time.Minute, Argv: []string{"sh", "-c",
		`if mkdir "` + mark + `" 2>/dev/null; then "` + daemon + `" kill slurmdbd >/dev/null 2>&1; fi; exec "$0" sacctmgr "$@"`, env.ExecScript}}
	h.rec.Cluster = slurmadapter.New(h.client).WithSacctmgr(r, 1, nil)
	var err error
	fault.Timed(t, "apply with slurmdbd killed at the load", func() { _, _, err = h.apply() })
	if err == nil {
		t.Fatal("apply with slurmdbd killed at the load: no error")
	}
	if r.Commands() == 0 {
		t.Fatal("no sacctmgr command ran")
	}
	t.Logf("outcome: %v", err)
	dbd.Start()
	fault.Timed(t, "converging apply after the restart", h.converge)
}
