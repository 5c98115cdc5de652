//go:build integration

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTenantApplyThroughSacctmgr: with GPUBRIDGE_SACCTMGR naming the
// testbed's sacctmgr (reconcile.sacctmgr), `apply -f` of 25 tenants with
// mixed-case descriptions loads the users' associations through sacctmgr:
// the apply makes 3 slurmrestd writes (QOS, accounts and their cluster
// associations), the accounts keep their descriptions, the next plan is
// empty, a loaded user submits under the tenant, and deleting the 25 makes
// no slurmrestd write and leaves nothing.
func TestTenantApplyThroughSacctmgr(t *testing.T) {
	var names []string
	var y strings.Builder
	y.WriteString("version: 1\ntenants:\n")
	for i := range 25 {
		n := fmt.Sprintf("t3sm%02d", i)
		names = append(names, n)
		users := n + "a, " + n + "b"
		if i == 7 {
			users += ", heidi"
		}
		fmt.Fprintf(&y, "  - name: %s\n    description: Team %d, GPU Research\n    organization: Physics Dept %d\n    users: [%s]\n    gpus: {h100: 1}\n", n, i, i, users)
	}
	h := newTenantIT(t, names...)
	t.Setenv("GPUBRIDGE_SACCTMGR", h.env.ExecScript+" sacctmgr")
	dir := t.TempDir()
	file := filepath.Join(dir, "tenants.yaml")
	if err := os.WriteFile(file, []byte(y.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := h.apply("-f", file)
	if len(mine(r.Changes, names...)) < 25*4 || r.Writes > 4 || r.Sacctmgr < 1 || r.Sacctmgr > 4 {
		t.Errorf("cold apply: %d changes of the tenants, %d slurmrestd writes, %d sacctmgr commands; want 25 x 4 or more, at most 4 writes (QOS, accounts, the accounts' QOS) and 1 to 4 loads", len(mine(r.Changes, names...)), r.Writes, r.Sacctmgr)
	}
	if left := mine(h.plan().Changes, names...); len(left) > 0 {
		t.Errorf("plan after the apply: %v", left)
	}
	desc := h.sacctmgr("-n", "-P", "show", "account", "t3sm07", "format=description,organization")
	if strings.TrimSpace(desc) != "gpubridge: Team 7, GPU Research|Physics Dept 7" {
		t.Errorf("t3sm07's description|organization = %q", desc)
	}
	id := h.mustSbatch("heidi", "-A", "t3sm07", "-p", "pool", "--gres=gpu:h100:1", "--wrap", "true")
	h.env.Run(t.Context(), "", nil, "scancel", fmt.Sprint(id))

	del := filepath.Join(dir, "delete.yaml")
	if err := os.WriteFile(del, []byte("version: 1\ndelete: ["+strings.Join(names, ", ")+"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := h.cliDeleting("-i", "--json", "apply", "-f", del)
	if code != 0 {
		t.Fatalf("delete apply: exit %d: %s", code, errs)
	}
	var d applyJSON
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("apply --json: %v\n%s", err, out)
	}
	if d.Writes != 0 || d.Sacctmgr != 2 || len(d.Removed) != 25 {
		t.Errorf("delete apply: %d slurmrestd writes, %d sacctmgr commands, %d tenants removed; want 0 writes, 2 commands (delete account, delete qos) and 25", d.Writes, d.Sacctmgr, len(d.Removed))
	}
	if left := strings.TrimSpace(h.sacctmgr("-n", "-P", "show", "assoc", "account="+strings.Join(names, ","), "format=account,user")); left != "" {
		t.Errorf("associations left after the delete:\n%s", left)
	}
	if left := strings.TrimSpace(h.sacctmgr("-n", "-P", "show", "qos", "name="+strings.Join(names, ","), "format=name")); left != "" {
		t.Errorf("QOS left after the delete:\n%s", left)
	}
}
