//go:build integration

package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestConfigTestbed runs `config render` and `config check` on the testbed
// as docs/burst.md shows them: the nodes and GPU types read from
// slurmrestd, the live configuration with scontrol run in the testbed's
// root, and without scontrol from slurmrestd alone; the testbed runs the
// rendered configuration, so check exits 0 both ways.
func TestConfigTestbed(t *testing.T) {
	env := testbed.Require(t)
	cli := func(args ...string) (int, string, string) {
		var out, errw bytes.Buffer
		code := run(args, strings.NewReader(""), &out, &errw)
		return code, out.String(), errw.String()
	}
	code, out, errw := cli("config", "render")
	if code != 0 || !strings.Contains(out, "AccountingStorageTRES=gres/gpu,gres/gpu:1g.10gb,gres/gpu:3g.40gb,gres/gpu:h100\n") ||
		!strings.Contains(out, "PartitionName=ondemand Nodes=gpu-a,gpu-b Default=NO PriorityTier=1 PreemptMode=REQUEUE State=UP\n") {
		t.Errorf("config render: exit %d\n%s%s", code, out, errw)
	}
	code, out, errw = cli("config", "check", "-P", "--scontrol", env.ExecScript+" scontrol")
	if code != 0 || strings.Contains(out, "|unknown") || !strings.Contains(out, "|PreemptType|preempt/partition_prio|preempt/partition_prio|ok\n") {
		t.Errorf("config check with scontrol: exit %d\n%s%s", code, out, errw)
	}
	// From slurmrestd alone the global keys are unknown: exit 1 unless
	// --allow-unknown.
	code, out, errw = cli("config", "check", "-P", "--scontrol", "")
	if code != 1 || !strings.Contains(out, "|PreemptType|preempt/partition_prio||unknown\n") || !strings.Contains(out, "ondemand|PriorityTier|1|1|ok\n") ||
		!strings.Contains(errw, "setting(s) could not be verified") {
		t.Errorf("config check from slurmrestd: exit %d\n%s%s", code, out, errw)
	}
	code, out, errw = cli("config", "check", "-P", "--scontrol", "", "--allow-unknown")
	if code != 0 || !strings.Contains(out, "|PreemptType|preempt/partition_prio||unknown\n") {
		t.Errorf("config check --allow-unknown from slurmrestd: exit %d\n%s%s", code, out, errw)
	}
}
