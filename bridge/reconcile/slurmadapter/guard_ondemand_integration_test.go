//go:build integration

package slurmadapter

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// TestGuardSelfBurstRefused: users' associations allow the shared
// on-demand QOS (so that the burst controller can move their jobs), and the
// guard keeps a tenant's user from asking for it directly, through the real
// slurmctld and slurmrestd: sbatch --qos=ondemand -p ondemand (and either
// alone, and -p pool,ondemand) and the same as an update with scontrol and
// REST are refused; the same request in an account that is not a tenant is
// accepted (the refusal is the guard's, not Slurm's); SlurmUser's update
// (the burst controller's token) moves the job; the user may then not
// change the moved job's GPUs, and may take it back to the pool.
func TestGuardSelfBurstRefused(t *testing.T) {
	h := newGuardIT(t, map[string][]string{"g9od": {"dave"}, "g9odplain": {"dave"}})
	ctx := context.Background()
	// The shared on-demand QOS, as apply makes it (never removed: other
	// tests and every tenant's association use it).
	_, _ = h.env.Run(ctx, "", nil, "sacctmgr", "-i", "add", "qos", "ondemand")
	for _, a := range []string{"g9od", "g9odplain"} {
		h.sacctmgr("-i", "modify", "user", "where", "name=dave", "account="+a, "set", "qos=normal,ondemand", "defaultqos=normal")
	}
	h.writeTable([]tenant.Tenant{{Name: "g9od", Users: []string{"dave"}, GPUs: tenant.Quota{"h100": 1}}})
	log := h.ctldLog()
	const self = "gpubridge: tenant g9od may not request the on-demand "

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--qos=ondemand", "-p", "ondemand"}, self + "QOS ondemand: gpubridge's burst controller moves tenant g9od's jobs there"},
		{[]string{"--qos=ondemand", "-p", "pool"}, self + "QOS ondemand"},
		{[]string{"-p", "ondemand"}, self + "partition ondemand"},
		{[]string{"-p", "pool,ondemand"}, self + "partition ondemand"},
	} {
		args := append([]string{"-A", "g9od", "--hold", "--gres=gpu:h100:1"}, c.args...)
		id, msg := h.sbatch("dave", append(args, "--wrap", "sleep 5")...)
		refused(t, "sbatch "+strings.Join(args, " "), msg, id != 0, c.want)
	}
	logGuardLines(t, log.wait(t, "gpubridge guard: refused job of user dave in account g9od: "+self+"QOS ondemand"))

	// The control: the same request in an account that is not a tenant.
	if id, msg := h.sbatch("dave", "-A", "g9odplain", "--qos=ondemand", "-p", "ondemand", "--hold", "--gres=gpu:h100:1", "--wrap", "sleep 5"); id == 0 {
		t.Fatalf("sbatch --qos=ondemand -p ondemand in g9odplain (not a tenant): %s; want it accepted", msg)
	} else if got := h.field(id, "%P|%q"); got != "ondemand|ondemand" {
		t.Errorf("job %d of g9odplain: partition|qos %q, want ondemand|ondemand", id, got)
	}

	// Updates: the tenant's pending pool job may not be moved there by its user.
	j := h.mustSbatch("dave", "-A", "g9od", "-p", "pool", "--hold", "--gres=gpu:h100:1", "--wrap", "sleep 5")
	jid := fmt.Sprintf("jobid=%d", j)
	out, ok := h.run("dave", "scontrol", "update", jid, "qos=ondemand", "partition=ondemand")
	refused(t, "scontrol update qos=ondemand partition=ondemand", out, ok, fmt.Sprintf("gpubridge: job %d: tenant g9od may not request the on-demand QOS ondemand", j))
	out, ok = h.run("dave", "scontrol", "update", jid, "partition=pool,ondemand")
	refused(t, "scontrol update partition=pool,ondemand", out, ok, fmt.Sprintf("gpubridge: job %d: tenant g9od may not request the on-demand partition ondemand", j))
	if nums := h.restUpdate("dave", j, `{"partition":"ondemand","qos":"ondemand"}`); len(nums) == 0 || nums[0] != 2002 {
		t.Errorf("REST update to the on-demand tier with dave's token: errors %v; want 2002 (access denied)", nums)
	}
	logGuardLines(t, log.wait(t, fmt.Sprintf("gpubridge guard: refused update of job %d (user dave, account g9od): gpubridge: job %d: tenant g9od may not request the on-demand QOS ondemand", j, j)))
	if got := h.field(j, "%P|%q"); got != "pool|normal" {
		t.Fatalf("job %d after the refused updates: partition|qos %q, want pool|normal", j, got)
	}

	// SlurmUser moves it, as the burst controller does (slurmrestd token of
	// the slurm user; not root).
	if nums := h.restUpdate("slurm", j, `{"partition":"ondemand","qos":"ondemand","admin_comment":"g9 moved by SlurmUser"}`); len(nums) != 0 {
		t.Fatalf("REST update to the on-demand tier with SlurmUser's token: errors %v; want none", nums)
	}
	if got := h.field(j, "%P|%q"); got != "ondemand|ondemand" {
		t.Fatalf("job %d after SlurmUser's move: partition|qos %q, want ondemand|ondemand", j, got)
	}
	// Its user may not grow it there, nor move it to the pool in the on-demand QOS...
	out, ok = h.run("dave", "scontrol", "update", jid, "gres=gpu:h100:2")
	refused(t, "scontrol update gres=gpu:h100:2 of a moved job", out, ok, fmt.Sprintf("gpubridge: job %d is in the on-demand QOS ondemand", j))
	out, ok = h.run("dave", "scontrol", "update", jid, "partition=pool")
	refused(t, "scontrol update partition=pool of a moved job", out, ok, "its partition may not change there")
	if got := h.field(j, "%P|%q|%b"); got != "ondemand|ondemand|gres/gpu:h100:1" {
		t.Errorf("moved job %d after the refused updates: %q, want ondemand|ondemand|gres/gpu:h100:1", j, got)
	}
	// ...but may take it back to the pool.
	if out, ok := h.run("dave", "scontrol", "update", jid, "qos=normal", "partition=pool"); !ok {
		t.Errorf("scontrol update qos=normal partition=pool of a moved job: %s; want it accepted", out)
	}
	if got := h.field(j, "%P|%q"); got != "pool|normal" {
		t.Errorf("job %d back in the pool: partition|qos %q, want pool|normal", j, got)
	}
	// root may put it there too.
	if out, ok := h.run("", "scontrol", "update", jid, "qos=ondemand", "partition=ondemand"); !ok {
		t.Errorf("root's scontrol update to the on-demand tier: %s", out)
	}
}
