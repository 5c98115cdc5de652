package app

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/slurmconf"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

// ping fails (after printing what slurmrestd said) unless a primary
// controller responds.
func TestPingError(t *testing.T) {
	cases := map[string]struct {
		p    slurmrest.PingResult
		fail bool
	}{
		"primary up":         {p: slurmrest.PingResult{Controllers: []slurmrest.Controller{{Primary: true, Responding: true}}}},
		"primary down":       {p: slurmrest.PingResult{Controllers: []slurmrest.Controller{{Primary: true}}}, fail: true},
		"only a backup":      {p: slurmrest.PingResult{Controllers: []slurmrest.Controller{{Responding: true}}}, fail: true},
		"no controller seen": {fail: true},
	}
	for name, tc := range cases {
		err := pingError(tc.p)
		if (err != nil) != tc.fail || err != nil && !strings.Contains(err.Error(), "no primary controller responds") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// config check prints its findings' table; burst run-once its cycle's.
func TestCheckAndCycleTables(t *testing.T) {
	fs := []slurmconf.Finding{{Partition: "pool", Key: "PriorityTier", Want: "10", Got: "1", Status: slurmconf.Differs}}
	if diff := cmp.Diff(slurmconf.FindingsTable(fs), SlurmConfCheck{Findings: fs}.Table()); diff != "" {
		t.Errorf("config check (-want +got)\n%s", diff)
	}
	res := burst.Result{Moved: []burst.Move{{Job: burst.Job{ID: 7, User: "alice"}, Tenant: "acme", GPUs: burst.Request{"h100": 1}}}}
	for _, dry := range []bool{false, true} {
		if diff := cmp.Diff(burst.CycleTable(res, dry), BurstCycle{Result: res, DryRun: dry}.Table()); diff != "" {
			t.Errorf("burst run-once, dry run %v (-want +got)\n%s", dry, diff)
		}
	}
}
