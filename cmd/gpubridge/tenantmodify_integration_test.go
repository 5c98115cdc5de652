//go:build integration

package main

import (
	"context"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/bridge/reserve/store/storetest"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestModifyPolicyOnlySaysNoApply: a booking or burst policy change says
// that nothing changes in Slurm; a quota change still points at apply. On
// a scratch store (nothing is applied).
func TestModifyPolicyOnlySaysNoApply(t *testing.T) {
	env := testbed.Require(t)
	if env.DBDSN == "" {
		t.Fatal("GPUBRIDGE_DB_DSN is unset: `source .testbed/env`")
	}
	sc, err := storetest.New(context.Background(), env.DBDSN, "gpubridge_lcmod")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sc.Close() })
	t.Setenv("GPUBRIDGE_DB_DSN", sc.DSN)
	t.Setenv("GPUBRIDGE_SLURMREST_TIMEOUT", "120s")
	mustCLI(t, "-i", "add", "tenant", "lcmod", "users=alice", "gpus=h100:1")
	// Completion of tenant names reads the store (docs/install.md).
	comp := mustCLI(t, "__complete", "modify", "tenant", "")
	t.Logf("gpubridge __complete modify tenant ''\n%s", comp)
	if !strings.HasPrefix(comp, "lcmod\n") {
		t.Errorf("completion of tenant names:\n%s", comp)
	}
	out := mustCLI(t, "-i", "modify", "tenant", "lcmod", "set", "booking.spendlimit=100.00", "burst=yes")
	t.Logf("gpubridge -i modify tenant lcmod set booking.spendlimit=100.00 burst=yes\n%s", out)
	if !strings.Contains(out, "Nothing changes in Slurm") || strings.Contains(out, "makes the change in Slurm") {
		t.Errorf("policy-only modify said:\n%s", out)
	}
	out = mustCLI(t, "-i", "modify", "tenant", "lcmod", "set", "gpus=h100:2", "booking.spendlimit=none")
	if !strings.Contains(out, "`gpubridge apply` makes the change in Slurm") {
		t.Errorf("quota modify said:\n%s", out)
	}
}
