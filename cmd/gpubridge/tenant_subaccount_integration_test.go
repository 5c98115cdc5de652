//go:build integration

package main

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
)

// TestTenantAdminSubAccountEscape (issue 25 item 1), on the real
// slurmctld: before, a tenant admin (a Slurm coordinator of the tenant's
// account) added an account under it with sacctmgr and ran 4 GPUs there on
// a quota of 1, in QOS normal, the guard silent. Now: the admin is no
// coordinator, so sacctmgr refuses; a sub-account made by someone who may
// (root here) inherits the tenant QOS from the tenant's account, so the
// quota holds its jobs; reconcile reports it, the guard refuses new jobs in
// it while its jobs run, and apply removes it once they end.
func TestTenantAdminSubAccountEscape(t *testing.T) {
	const tn, sub, admin = "t25esc", "t25escsub", "heidi"
	h := newTenantIT(t, tn)
	ctx := context.Background()
	dropSub := func() {
		_, _ = h.env.Run(ctx, "", nil, "scancel", "-A", sub)
		_, _ = h.env.Run(ctx, "", nil, "sacctmgr", "-i", "delete", "user", admin, "account="+sub)
		_, _ = h.env.Run(ctx, "", nil, "sacctmgr", "-i", "delete", "account", sub)
	}
	dropSub()
	t.Cleanup(dropSub) // before the tenant's removal (cleanups run last first)
	h.ok("-i", "add", "tenant", tn, "gpus=h100:1", "users="+admin, "admins="+admin, "description=T25 sub-account escape")
	h.apply()

	// The admin is not a coordinator: sacctmgr refuses the sub-account.
	if coords := strings.TrimSpace(h.sacctmgr("-n", "-P", "show", "account", tn, "withcoord", "format=coordinators")); coords != "" {
		t.Errorf("coordinators of %s: %q; want none (admins are not Slurm coordinators)", tn, coords)
	}
	if out, err := h.env.Run(ctx, admin, nil, "sacctmgr", "-i", "add", "account", sub, "parent="+tn); err == nil {
		t.Errorf("the tenant admin added account %s under %s: %s", sub, tn, out)
		dropSub()
	}

	// Someone who may (root) adds one, with the admin in it.
	h.sacctmgr("-i", "add", "account", sub, "parent="+tn, "description=stray", "organization=stray")
	h.sacctmgr("-i", "add", "user", admin, "account="+sub)
	if qos := strings.TrimSpace(h.sacctmgr("-n", "-P", "show", "assoc", "account="+sub, "user="+admin, "format=qos,defaultqos")); qos != "ondemand,"+tn+","+tn+"-resv|"+tn {
		t.Errorf("the sub-account's user association has QOS %q; want the tenant's (%s), inherited from the tenant's account", qos, tn)
	}
	id := h.mustSbatch(admin, "-A", sub, "-p", "pool", "--gres=gpu:h100:2", "--wrap", "sleep 300")
	time.Sleep(6 * time.Second) // a scheduler pass (sched_interval=5)
	out, _ := h.env.Run(ctx, "", nil, "squeue", "-h", "-j", strconv.FormatInt(id, 10), "-o", "%T|%q|%r")
	if f := strings.Split(strings.TrimSpace(out), "|"); len(f) != 3 || f[0] != "PENDING" || f[1] != tn {
		t.Errorf("job %d in the sub-account: %q; want PENDING in QOS %s (2 GPUs on a quota of 1)", id, strings.TrimSpace(out), tn)
	}

	// Reconcile reports it; while its job waits it stays, and the guard
	// refuses new jobs in it.
	r := h.apply()
	if !slices.ContainsFunc(r.Waiting, func(w reconcile.Wait) bool {
		return w.Name == sub && strings.Contains(w.Reason, "sub-account of tenant "+tn)
	}) {
		t.Errorf("apply with the sub-account's job pending: waiting %v; want %s waiting as a sub-account of %s", r.Waiting, sub, tn)
	}
	if jid, msg := h.sbatch(admin, "-A", sub, "-p", "pool", "--wrap", "sleep 5"); jid != 0 || !strings.Contains(msg, "is under tenant "+tn+"'s account") {
		t.Errorf("new job in the sub-account: id %d, %q; want the guard's refusal", jid, msg)
	}
	h.env.Run(ctx, "", nil, "scancel", strconv.FormatInt(id, 10))
	h.waitCount([]int64{id}, map[string]int{"PENDING": 0, "RUNNING": 0}, 30*time.Second)
	r = h.apply()
	if got := mine(r.Changes, sub); !slices.ContainsFunc(got, func(c string) bool { return strings.HasPrefix(c, "- account "+sub+"  sub-account of tenant "+tn) }) {
		t.Errorf("apply after the job ended: %v; want the sub-account deleted", got)
	}
	if left := strings.TrimSpace(h.sacctmgr("-n", "-P", "show", "account", sub, "format=account")); left != "" {
		t.Errorf("account %s still in Slurm after apply", sub)
	}
}
