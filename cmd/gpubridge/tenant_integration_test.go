//go:build integration

package main

// Acceptance of tenants on the real testbed (make testbed-up; source
// .testbed/env). Each test uses its own tenant names (prefix t3) and cleans
// up: it cancels its jobs, deletes its tenants and applies. The tests use
// gpubridge's real store ($GPUBRIDGE_DB_DSN), as an admin would, and write
// the job_submit guard's data file inside the testbed root.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantadmin"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

type tenantIT struct {
	t   *testing.T
	env testbed.Env
}

func newTenantIT(t *testing.T, tenants ...string) *tenantIT {
	t.Helper()
	env := testbed.Require(t)
	if env.DBDSN == "" {
		t.Fatal("GPUBRIDGE_DB_DSN is unset: `source .testbed/env`")
	}
	t.Setenv("GPUBRIDGE_GUARD_FILE", filepath.Join(env.Root, "var/lib/gpubridge/guard/tenants.table")) // contrib/job_submit.lua's default
	t.Setenv("GPUBRIDGE_SLURMREST_TIMEOUT", "120s")
	h := &tenantIT{t: t, env: env}
	h.remove(tenants...) // leftovers of an earlier, interrupted run
	t.Cleanup(func() { h.remove(tenants...) })
	return h
}

// cli runs gpubridge in-process.
func (h *tenantIT) cli(stdin string, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func (h *tenantIT) ok(args ...string) string {
	h.t.Helper()
	out, errs, code := h.cli("", args...)
	if code != 0 {
		h.t.Fatalf("gpubridge %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

type applyJSON struct {
	Changes      []reconcile.Change        `json:"changes"`
	Waiting      []reconcile.Wait          `json:"waiting"`
	Removed      []string                  `json:"removedTenants"`
	Reads        int64                     `json:"reads"`
	Writes       int64                     `json:"writes"`
	Sacctmgr     int64                     `json:"sacctmgrCommands"`
	GuardWritten bool                      `json:"guardWritten"`
	MassDelete   *reconcile.MassDelete     `json:"massDelete"`
	StoreChanges []tenantadmin.StoreChange `json:"storeChanges"`
}

// apply runs `gpubridge -i --json apply` and decodes its report.
func (h *tenantIT) apply(args ...string) applyJSON {
	h.t.Helper()
	out := h.ok(append([]string{"-i", "--json", "apply"}, args...)...)
	var r applyJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		h.t.Fatalf("apply --json: %v\n%s", err, out)
	}
	return r
}

func (h *tenantIT) plan() applyJSON {
	h.t.Helper()
	out := h.ok("--json", "plan")
	var r applyJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		h.t.Fatalf("plan --json: %v\n%s", err, out)
	}
	return r
}

// mine filters changes to the objects of the given tenants.
func mine(cs []reconcile.Change, tenants ...string) []string {
	var out []string
	for _, c := range cs {
		for _, t := range tenants {
			if c.Name == t || strings.HasSuffix(c.Name, "("+t+")") {
				out = append(out, c.String())
			}
		}
	}
	return out
}

// remove cancels the tenants' jobs, deletes them and applies until they are gone.
func (h *tenantIT) remove(tenants ...string) {
	if len(tenants) == 0 {
		return
	}
	ctx := context.Background()
	for _, t := range tenants {
		_, _ = h.env.Run(ctx, "", nil, "scancel", "-A", t)
	}
	var known []string
	for _, t := range tenants {
		if _, _, code := h.cli("", "show", "tenant", t); code == 0 {
			known = append(known, t)
		}
	}
	if len(known) > 0 {
		h.cli("", append([]string{"-i", "delete", "tenant"}, known...)...)
	}
	for i := 0; i < 20; i++ {
		_, errs, code := h.cliDeleting("-i", "apply")
		left := false
		for _, t := range known {
			if _, _, c := h.cli("", "show", "tenant", t); c == 0 {
				left = true
			}
		}
		if code == 0 && !left {
			return
		}
		if code != 0 {
			h.t.Logf("cleanup apply: %s", errs)
		}
		time.Sleep(time.Second)
	}
	h.t.Errorf("cleanup: tenants %v still there", known)
}

// cliDeleting runs an apply that deletes the test's own tenants, which may
// be every tenant in Slurm, or more than reconcile.maxDeleteShare of them:
// refused for that, it is run again with --allow-mass-delete. A refusal
// for objects the store has no record of (someone else's) stands: the
// test never deletes what it did not make.
func (h *tenantIT) cliDeleting(args ...string) (string, string, int) {
	out, errs, code := h.cli("", args...)
	if code != 0 && (strings.Contains(errs, "mass deletion refused ("+reconcile.ReasonAll+")") || strings.Contains(errs, "mass deletion refused ("+reconcile.ReasonShare+")")) {
		return h.cli("", append(args, "--allow-mass-delete")...)
	}
	return out, errs, code
}

// sbatch submits a job as user and returns its id, or the error output.
func (h *tenantIT) sbatch(user string, args ...string) (int64, string) {
	h.t.Helper()
	argv := append([]string{"sbatch", "--parsable", "-o", "/dev/null"}, args...)
	out, err := h.env.Run(context.Background(), user, nil, argv...)
	if err != nil {
		return 0, err.Error()
	}
	id, perr := strconv.ParseInt(strings.Split(strings.TrimSpace(out), ";")[0], 10, 64)
	if perr != nil {
		h.t.Fatalf("sbatch output %q", out)
	}
	return id, ""
}

func (h *tenantIT) mustSbatch(user string, args ...string) int64 {
	h.t.Helper()
	id, msg := h.sbatch(user, args...)
	if id == 0 {
		h.t.Fatalf("sbatch %v as %s: %s", args, user, msg)
	}
	return id
}

// states returns "STATE/REASON" per job id from squeue.
func (h *tenantIT) states(ids ...int64) map[int64]string {
	h.t.Helper()
	var list []string
	for _, id := range ids {
		list = append(list, strconv.FormatInt(id, 10))
	}
	out, _ := h.env.Run(context.Background(), "", nil, "squeue", "-h", "-j", strings.Join(list, ","), "-o", "%i|%T|%r")
	m := map[int64]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 3 {
			continue
		}
		id, _ := strconv.ParseInt(f[0], 10, 64)
		m[id] = f[1] + "/" + f[2]
	}
	return m
}

// waitCount waits until want[state-or-state/reason] jobs are in that state.
func (h *tenantIT) waitCount(ids []int64, want map[string]int, timeout time.Duration) map[int64]string {
	h.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st := h.states(ids...)
		got := map[string]int{}
		for _, s := range st {
			got[s]++
			got[strings.Split(s, "/")[0]]++
		}
		ok := true
		for k, n := range want {
			if got[k] != n {
				ok = false
			}
		}
		if ok {
			return st
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("jobs %v: states %v; want %v", ids, st, want)
		}
		time.Sleep(time.Second)
	}
}

func (h *tenantIT) sacctmgr(args ...string) string {
	h.t.Helper()
	return h.env.Exec(h.t, "", append([]string{"sacctmgr"}, args...)...)
}

// transactionsAbout counts slurmdbd transactions that mention name.
func (h *tenantIT) transactionsAbout(name string) int {
	h.t.Helper()
	n := 0
	for _, line := range strings.Split(h.sacctmgr("-n", "-P", "list", "transactions"), "\n") {
		if strings.Contains(line, name) {
			n++
		}
	}
	return n
}

// TestTenantQuotaHoldsAndGrows: with h100=2 two of three 1-GPU jobs run and
// the third pends with QOSGrpGRES; raising the quota to 3 starts it;
// shrinking it to 1 stops nothing that runs.
func TestTenantQuotaHoldsAndGrows(t *testing.T) {
	h := newTenantIT(t, "t3quota")
	h.ok("-i", "add", "tenant", "t3quota", "gpus=h100:2", "users=erin", "description=T3 quota acceptance")
	h.apply()
	var ids []int64
	for range 3 {
		ids = append(ids, h.mustSbatch("erin", "-A", "t3quota", "-p", "pool", "--gres=gpu:h100:1", "--wrap", "sleep 300"))
	}
	h.waitCount(ids, map[string]int{"RUNNING": 2, "PENDING/QOSGrpGRES": 1}, 60*time.Second)

	h.ok("-i", "modify", "tenant", "t3quota", "set", "gpus=h100:3")
	r := h.apply()
	if got := mine(r.Changes, "t3quota"); len(got) != 1 || !strings.Contains(got[0], "GrpTRES gres/gpu:h100=2 -> gres/gpu:h100=3") {
		t.Errorf("apply after modify: changes %v", got)
	}
	h.waitCount(ids, map[string]int{"RUNNING": 3}, 60*time.Second)

	// Shrinking never stops running work: GrpTRES only gates new starts.
	h.ok("-i", "modify", "tenant", "t3quota", "set", "gpus=h100:1")
	h.apply()
	time.Sleep(6 * time.Second) // a scheduler pass (sched_interval=5)
	h.waitCount(ids, map[string]int{"RUNNING": 3}, 5*time.Second)
	extra := h.mustSbatch("erin", "-A", "t3quota", "-p", "pool", "--gres=gpu:h100:1", "--wrap", "sleep 300")
	h.waitCount([]int64{extra}, map[string]int{"PENDING/QOSGrpGRES": 1}, 30*time.Second)
}

// TestTenantMIGQuotaAndUntypedGuard: a MIG quota holds like a GPU quota, and
// an untyped GPU request from the tenant is refused at submission with the
// guard's message naming the types it may use.
func TestTenantMIGQuotaAndUntypedGuard(t *testing.T) {
	h := newTenantIT(t, "t3mig")
	h.ok("-i", "add", "tenant", "t3mig", "gpus=1g.10gb:2", "users=frank")
	h.apply()
	var ids []int64
	for range 3 {
		ids = append(ids, h.mustSbatch("frank", "-A", "t3mig", "-p", "pool", "--gres=gpu:1g.10gb:1", "--wrap", "sleep 300"))
	}
	h.waitCount(ids, map[string]int{"RUNNING": 2, "PENDING/QOSGrpGRES": 1}, 60*time.Second)

	for _, req := range [][]string{{"--gres=gpu:1"}, {"--gpus=1"}, {"--gres=gpu:3g.40gb:1"}} {
		args := append([]string{"-A", "t3mig", "-p", "pool"}, req...)
		id, msg := h.sbatch("frank", append(args, "--wrap", "sleep 5")...)
		if id != 0 {
			h.env.Run(context.Background(), "", nil, "scancel", strconv.FormatInt(id, 10))
			t.Errorf("sbatch %v was accepted (job %d); want it refused by the guard", req, id)
			continue
		}
		want := "GPU request without a type refused for tenant t3mig"
		if strings.Contains(req[0], "3g.40gb") {
			want = "GPU type 3g.40gb is not in tenant t3mig's quota"
		}
		if !strings.Contains(msg, want) || !strings.Contains(msg, "Tenant t3mig may use: 1g.10gb (quota 2)") {
			t.Errorf("sbatch %v: %q; want the guard's message %q naming the types", req, msg, want)
		}
	}
}

// TestTenantDriftRepair: an out-of-band GrpTRES change is one plan line;
// apply repairs it; then plan is empty and apply makes zero writes (the
// client's counter, and no new slurmdbd transaction).
func TestTenantDriftRepair(t *testing.T) {
	h := newTenantIT(t, "t3drift")
	h.ok("-i", "add", "tenant", "t3drift", "gpus=h100:2,1g.10gb:1", "users=dave")
	h.apply()
	h.sacctmgr("-i", "modify", "qos", "t3drift", "set", "GrpTRES=gres/gpu:h100=7")
	p := h.plan()
	want := []string{"~ qos t3drift  GrpTRES gres/gpu:1g.10gb=1,gres/gpu:h100=7 -> gres/gpu:1g.10gb=1,gres/gpu:h100=2"}
	if got := mine(p.Changes, "t3drift"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("plan after drift: %q; want %q", got, want)
	}
	if p.Writes != 0 || p.Reads > 3 {
		t.Errorf("plan made %d reads and %d writes", p.Reads, p.Writes)
	}
	// Changes are no error: exit 2, and no "error" on stderr.
	if _, errs, code := h.cli("", "plan", "--detailed-exitcode"); code != 2 || strings.Contains(errs, "error") {
		t.Errorf("plan --detailed-exitcode with changes: exit %d, stderr %q; want 2 without \"error\"", code, errs)
	}
	h.apply()
	if got := h.sacctmgr("-n", "-P", "show", "qos", "t3drift", "format=grptres"); strings.TrimSpace(got) != "gres/gpu:1g.10gb=1,gres/gpu:h100=2" {
		t.Errorf("GrpTRES after apply = %q", got)
	}
	p = h.plan()
	if len(p.Changes) != 0 {
		t.Errorf("plan after repair: %v", p.Changes)
	}
	before := h.transactionsAbout("t3drift")
	total := len(strings.Split(h.sacctmgr("-n", "-P", "list", "transactions"), "\n"))
	r := h.apply()
	if r.Writes != 0 || r.Reads > 3 || len(r.Changes) != 0 {
		t.Errorf("no-op apply: %d reads, %d writes, changes %v; want <= 3 reads, 0 writes", r.Reads, r.Writes, r.Changes)
	}
	if after := h.transactionsAbout("t3drift"); after != before {
		t.Errorf("no-op apply added %d slurmdbd transaction(s) about t3drift", after-before)
	}
	t.Logf("slurmdbd transactions: %d before the no-op apply, %d after", total, len(strings.Split(h.sacctmgr("-n", "-P", "list", "transactions"), "\n")))
}

// TestTenantBadInputChangesNothing: every bad input exits non-zero with a
// clear message and changes neither the store nor Slurm.
func TestTenantBadInputChangesNothing(t *testing.T) {
	h := newTenantIT(t, "t3casea", "t3filea", "t3fileb")
	h.ok("-i", "add", "tenant", "t3casea", "users=carol")
	long := "t3" + strings.Repeat("x", 298)
	dir := t.TempDir()
	file := filepath.Join(dir, "tenants.yaml")
	os.WriteFile(file, []byte(`version: 1
tenants:
  - name: t3filea
    users: [carol]
    gpus: {h100: 1}
  - name: t3fileb
    gpus: {h100: -1}
  - name: t3filec
    gpus: {1g.10gb: 1}
`), 0o644)
	cases := map[string]struct {
		args []string
		want []string // substrings of stderr
	}{
		"semicolon":       {args: []string{"add", "tenant", "a;b", "gpus=h100:1"}, want: []string{`name: "a;b" is not a valid name`, "bad character ';'"}},
		"command":         {args: []string{"add", "tenant", "$(id)", "gpus=h100:1"}, want: []string{"bad character '$'"}},
		"quote":           {args: []string{"add", "tenant", "a'b"}, want: []string{`bad character "'"`}},
		"300 characters":  {args: []string{"add", "tenant", long}, want: []string{"is 300 characters long; at most 32"}},
		"case collision":  {args: []string{"add", "tenant", "T3CaseA"}, want: []string{`Slurm lower-cases account names, so write "t3casea"`, `collides with the existing tenant "t3casea"`}},
		"minus one":       {args: []string{"add", "tenant", "t3bad", "gpus=h100:-1"}, want: []string{"gpus.h100: -1 is negative", "-1 would silently clear the limit"}},
		"not a number":    {args: []string{"add", "tenant", "t3bad", "gpus=h100:abc"}, want: []string{`gpus.h100: "abc" is not a whole number`}},
		"unknown type":    {args: []string{"add", "tenant", "t3bad", "gpus=a100:2"}, want: []string{`gpus.a100: unknown GPU type "a100"; the cluster tracks: 1g.10gb, 3g.40gb, h100`}},
		"modify to -1":    {args: []string{"modify", "tenant", "t3casea", "set", "gpus=h100:-1"}, want: []string{"gpus.h100: -1 is negative"}},
		"one bad in file": {args: []string{"apply", "-f", file}, want: []string{"tenants[1] (t3fileb).gpus.h100: -1 is negative"}},
	}
	storeBefore := h.ok("--json", "show", "tenants")
	slurmBefore := h.transactionsAbout("t3")
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, errs, code := h.cli("", append([]string{"-i"}, c.args...)...)
			if code == 0 {
				t.Fatalf("exit 0; want a refusal")
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q does not say %q", errs, w)
				}
			}
		})
	}
	if after := h.ok("--json", "show", "tenants"); after != storeBefore {
		t.Errorf("the store changed:\nbefore %s\nafter %s", storeBefore, after)
	}
	if after := h.transactionsAbout("t3"); after != slurmBefore {
		t.Errorf("Slurm changed: %d new transaction(s) mention t3", after-slurmBefore)
	}
	if out := h.sacctmgr("-n", "-P", "show", "account", "t3filea", "format=account"); strings.TrimSpace(out) != "" {
		t.Errorf("the valid tenant of the refused file reached Slurm: %q", out)
	}
}

// TestTenantDeleteWaitsForJobs: deleting a tenant blocks new submissions at
// once, keeps its running and pending jobs, and removes its Slurm objects
// only when the jobs have ended.
func TestTenantDeleteWaitsForJobs(t *testing.T) {
	h := newTenantIT(t, "t3del")
	h.ok("-i", "add", "tenant", "t3del", "gpus=h100:1", "users=grace,heidi", "admins=grace")
	h.apply()
	running := h.mustSbatch("grace", "-A", "t3del", "-p", "cpu", "--wrap", "sleep 300")
	pending := h.mustSbatch("heidi", "-A", "t3del", "-p", "cpu", "--begin=now+1hour", "--wrap", "sleep 300")
	h.waitCount([]int64{running}, map[string]int{"RUNNING": 1}, 60*time.Second)

	h.ok("-i", "delete", "tenant", "t3del")
	r := h.apply()
	if got := mine(r.Changes, "t3del"); len(got) != 1 || !strings.Contains(got[0], "MaxSubmitJobsPerUser (none) -> 0") {
		t.Errorf("apply after delete: changes %v", got)
	}
	if len(r.Waiting) != 1 || r.Waiting[0].Name != "t3del" || r.Waiting[0].Running != 1 || r.Waiting[0].Pending != 1 {
		t.Errorf("apply after delete: waiting %+v; want t3del with 1 running and 1 pending", r.Waiting)
	}
	if id, msg := h.sbatch("grace", "-A", "t3del", "-p", "cpu", "--wrap", "sleep 5"); id != 0 || !strings.Contains(msg, "tenant t3del is being deleted") {
		t.Errorf("submission to a tenant being deleted: job %d, %q", id, msg)
	}
	st := h.states(running, pending)
	if !strings.HasPrefix(st[running], "RUNNING") || !strings.HasPrefix(st[pending], "PENDING") {
		t.Errorf("jobs after delete+apply: %v; want them untouched", st)
	}
	if out := h.sacctmgr("-n", "-P", "show", "account", "t3del", "format=account"); strings.TrimSpace(out) != "t3del" {
		t.Errorf("account removed while jobs remain: %q", out)
	}

	h.env.Exec(t, "", "scancel", strconv.FormatInt(running, 10), strconv.FormatInt(pending, 10))
	h.waitCount([]int64{running, pending}, map[string]int{"RUNNING": 0, "PENDING": 0}, 60*time.Second)
	// A cancelled job may still be completing for a moment (squeue shows
	// CG, slurmctld still counts it): apply waits for it, then removes.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		out, errs, code := h.cliDeleting("-i", "--json", "apply") // t3del may be the only tenant in Slurm
		if code != 0 {
			t.Fatalf("apply: exit %d: %s", code, errs)
		}
		r = applyJSON{}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("apply --json: %v\n%s", err, out)
		}
		if len(r.Removed) > 0 || time.Now().After(deadline) {
			break
		}
		if len(r.Waiting) != 1 || r.Waiting[0].Name != "t3del" {
			t.Errorf("apply while the cancelled jobs end: waiting %+v, changes %v", r.Waiting, mine(r.Changes, "t3del"))
			break
		}
	}
	if r.MassDelete != nil && r.MassDelete.Reason != reconcile.ReasonAll {
		t.Errorf("deleting t3del: mass delete %+v", r.MassDelete)
	}
	if len(r.Removed) != 1 || r.Removed[0] != "t3del" {
		t.Errorf("apply after the jobs ended: removed %v", r.Removed)
	}
	if out := h.sacctmgr("-n", "-P", "show", "account", "t3del", "format=account"); strings.TrimSpace(out) != "" {
		t.Errorf("account still there: %q", out)
	}
	if _, _, code := h.cli("", "show", "tenant", "t3del"); code == 0 {
		t.Error("tenant still in the store")
	}
}

// TestTenantUsersAndImport: users come and go through apply; an existing
// Slurm account is adopted by import and reconciled without a conflict.
func TestTenantUsersAndImport(t *testing.T) {
	h := newTenantIT(t, "t3imp")
	ctx := context.Background()
	try := func(args ...string) { h.env.Run(ctx, "", nil, args...) }
	try("sacctmgr", "-i", "add", "qos", "t3imp")
	h.sacctmgr("-i", "modify", "qos", "t3imp", "set", "GrpTRES=gres/gpu:h100=1")
	try("sacctmgr", "-i", "add", "account", "t3imp", "description=Imported team", "organization=physics")
	try("sacctmgr", "-i", "add", "user", "heidi", "account=t3imp")
	t.Cleanup(func() {
		try("sacctmgr", "-i", "delete", "account", "t3imp")
		try("sacctmgr", "-i", "delete", "qos", "t3imp")
	})

	// A tenant declared over the site's account is a conflict: nothing is
	// changed, and deleting that tenant leaves the site's account alone.
	h.ok("-i", "add", "tenant", "t3imp", "users=heidi")
	if _, errs, code := h.cli("", "plan"); code == 0 || !strings.Contains(errs, "account t3imp: exists in Slurm and was not created by gpubridge; to make the site's objects tenant t3imp, run `gpubridge delete tenant t3imp`, `gpubridge apply` (drops it from the store and leaves the site's objects alone), then `gpubridge import t3imp`; or rename the tenant in the store") {
		t.Errorf("plan over a site account: exit %d, %s", code, errs)
	}
	h.ok("-i", "delete", "tenant", "t3imp")
	h.apply()
	if out := h.sacctmgr("-n", "-P", "show", "assoc", "account=t3imp", "user=heidi", "format=account"); strings.TrimSpace(out) != "t3imp" {
		t.Fatalf("the site's association is gone: %q", out)
	}
	if _, _, code := h.cli("", "show", "tenant", "t3imp"); code == 0 {
		t.Fatal("the deleted tenant is still stored")
	}

	// sacctmgr stores the description lower-cased; import keeps it as Slurm has it.
	h.ok("-i", "import", "t3imp")
	out := h.ok("--json", "show", "tenant", "t3imp")
	var ts []tenant.Tenant
	if err := json.Unmarshal([]byte(out), &ts); err != nil || len(ts) != 1 {
		t.Fatalf("show tenant: %v %s", err, out)
	}
	if got := ts[0]; got.GPUs["h100"] != 1 || strings.Join(got.Users, ",") != "heidi" || !got.Adopted || !strings.EqualFold(got.Description, "Imported team") {
		t.Errorf("imported tenant %+v", got)
	}
	h.apply()
	if p := h.plan(); len(mine(p.Changes, "t3imp")) != 0 {
		t.Errorf("plan after adopting apply: %v", mine(p.Changes, "t3imp"))
	}
	got := h.sacctmgr("-n", "-P", "show", "assoc", "account=t3imp", "user=heidi", "format=qos,defaultqos")
	if !strings.Contains(got, "t3imp") || !strings.Contains(got, "ondemand") {
		t.Errorf("adopted association: %q", got)
	}

	h.ok("-i", "add", "user", "grace", "tenant=t3imp", "admin=yes")
	r := h.apply()
	if got := mine(r.Changes, "t3imp"); fmt.Sprint(got) != "[+ user grace (t3imp)  QOS=ondemand,t3imp,t3imp-resv DefaultQOS=t3imp]" {
		t.Errorf("add user: %v", got)
	}
	h.ok("-i", "delete", "user", "grace", "tenant=t3imp")
	r = h.apply()
	if got := mine(r.Changes, "t3imp"); fmt.Sprint(got) != "[- user grace (t3imp)]" {
		t.Errorf("delete user: %v", got)
	}
	if out := h.ok("-P", "-n", "show", "audit", "tenant=t3imp", "limit=3"); !strings.Contains(out, "|modify|tenant|t3imp|Users grace,heidi -> heidi; Admins grace -> (none)") {
		t.Errorf("audit log:\n%s", out)
	}
}
