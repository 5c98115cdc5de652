//go:build integration

package slurmadapter

// Acceptance of the job_submit guard (contrib/job_submit.lua, which use.sh
// installs as the testbed's job_submit.lua) through the real slurmctld and
// slurmrestd, with the tenant table written by GuardFile: updates that
// would bypass it are refused, GPU sharing is refused, and a table that is
// code is refused, logged and never run while jobs keep being checked
// against the last good table.
//
// The tests need no gpubridge database: they make their own Slurm accounts
// and associations (prefix g9) with sacctmgr, write the table for them, put
// back the table that was in place and remove what they made. Their user is
// dave, whom no other test makes a coordinator: a coordinator added by
// apply right after its user was deleted and re-created does not appear in
// Slurm (seen with grace: TestTenantDeleteWaitsForJobs after these tests).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// guardPathInRoot is contrib/job_submit.lua's default table path, as
// slurmctld sees it inside the testbed root.
const guardPathInRoot = "/var/lib/gpubridge/guard/tenants.table"

type guardIT struct {
	t     *testing.T
	env   testbed.Env
	table string // the table's path on this host
}

// newGuardIT makes accounts (each with the users given) and puts back, at
// the end, the guard table that was in place.
func newGuardIT(t *testing.T, accounts map[string][]string) *guardIT {
	t.Helper()
	env := testbed.Require(t)
	h := &guardIT{t: t, env: env, table: filepath.Join(env.Root, guardPathInRoot)}
	old, err := os.ReadFile(h.table)
	switch {
	case err == nil:
		t.Cleanup(func() { h.replaceTable(old) })
	case os.IsNotExist(err):
		t.Cleanup(func() { os.Remove(h.table) })
	default:
		t.Fatal(err)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for a := range accounts {
			if !yield(a) {
				return
			}
		}
	})
	users := map[string][]string{}
	for _, a := range names {
		for _, u := range accounts[a] {
			users[u] = append(users[u], a)
		}
	}
	cleanup := func() {
		for _, a := range names {
			h.try("scancel", "-A", a)
		}
		for u, mine := range users {
			h.removeUser(u, mine)
		}
		h.try("sacctmgr", "-i", "delete", "account", strings.Join(names, ","))
	}
	cleanup() // leftovers of an interrupted run
	t.Cleanup(cleanup)
	for _, a := range names {
		h.sacctmgr("-i", "add", "account", a, "description=g9 guard test", "organization=g9")
	}
	for _, a := range names {
		for _, u := range accounts[a] {
			h.sacctmgr("-i", "add", "user", u, "account="+a)
		}
	}
	return h
}

func (h *guardIT) try(args ...string) { h.env.Run(context.Background(), "", nil, args...) }

func (h *guardIT) sacctmgr(args ...string) string {
	h.t.Helper()
	return h.env.Exec(h.t, "", append([]string{"sacctmgr"}, args...)...)
}

// removeUser removes user's associations with the accounts mine, and the
// user when nothing else is left, without touching the user's others.
func (h *guardIT) removeUser(user string, mine []string) {
	out, err := h.env.Run(context.Background(), "", nil, "sacctmgr", "-n", "-P", "show", "assoc", "user="+user, "format=account")
	if err != nil {
		return
	}
	var others []string
	for _, a := range strings.Fields(out) {
		if !slices.Contains(mine, a) {
			others = append(others, a)
		}
	}
	if len(others) == 0 {
		h.try("sacctmgr", "-i", "delete", "user", user)
		return
	}
	def, _ := h.env.Run(context.Background(), "", nil, "sacctmgr", "-n", "-P", "show", "user", user, "format=defaultaccount")
	if slices.Contains(mine, strings.TrimSpace(def)) {
		h.try("sacctmgr", "-i", "modify", "user", user, "set", "defaultaccount="+others[0])
	}
	for _, a := range mine {
		h.try("sacctmgr", "-i", "delete", "user", user, "account="+a)
	}
}

// writeTable writes the table for ts with GuardFile, as apply does.
func (h *guardIT) writeTable(ts []tenant.Tenant) {
	h.t.Helper()
	if _, err := (GuardFile{Path: h.table, AllowEmpty: true}).Write(tenant.Guard(ts)); err != nil {
		h.t.Fatal(err)
	}
}

// replaceTable puts data at the table's path as it is (rename over it).
func (h *guardIT) replaceTable(data []byte) {
	h.t.Helper()
	if err := os.MkdirAll(filepath.Dir(h.table), 0o755); err != nil {
		h.t.Fatal(err)
	}
	tmp := h.table + ".g9tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Rename(tmp, h.table); err != nil {
		h.t.Fatal(err)
	}
}

// run runs a command in the root as user, failing the test if slurmctld
// does not answer within a minute (a guard that ran a loop would hang it).
func (h *guardIT) run(user string, args ...string) (string, bool) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := h.env.Run(ctx, user, nil, args...)
	if ctx.Err() != nil {
		h.t.Fatalf("%v as %s did not finish within 60 s: is slurmctld stuck?", args, user)
	}
	if err != nil {
		return out + err.Error(), false
	}
	return out, true
}

// sbatch submits a job and returns its id, or 0 and the error output.
func (h *guardIT) sbatch(user string, args ...string) (int64, string) {
	h.t.Helper()
	out, ok := h.run(user, append([]string{"sbatch", "--parsable", "-o", "/dev/null"}, args...)...)
	if !ok {
		return 0, out
	}
	id, err := strconv.ParseInt(strings.Split(strings.TrimSpace(out), ";")[0], 10, 64)
	if err != nil {
		h.t.Fatalf("sbatch output %q", out)
	}
	return id, ""
}

func (h *guardIT) mustSbatch(user string, args ...string) int64 {
	h.t.Helper()
	id, msg := h.sbatch(user, args...)
	if id == 0 {
		h.t.Fatalf("sbatch %v as %s: %s", args, user, msg)
	}
	return id
}

// field returns squeue fields (%a, %b, ...) of a job.
func (h *guardIT) field(id int64, format string) string {
	h.t.Helper()
	out, _ := h.env.Run(context.Background(), "", nil, "squeue", "-h", "-j", strconv.FormatInt(id, 10), "-o", format)
	return strings.TrimSpace(out)
}

// restUpdate posts a job update to slurmrestd with user's token and
// returns the error numbers it answered with.
func (h *guardIT) restUpdate(user string, id int64, body string) []int {
	h.t.Helper()
	tok := strings.TrimPrefix(strings.TrimSpace(h.env.Exec(h.t, "", "scontrol", "token", "username="+user, "lifespan=300")), "SLURM_JWT=")
	url := fmt.Sprintf("%s/slurm/v0.0.44/job/%d", strings.TrimRight(h.env.RestURL, "/"), id)
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("X-SLURM-USER-TOKEN", tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		h.t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r struct {
		Errors []struct {
			Description string `json:"description"`
			Number      int    `json:"error_number"`
			Error       string `json:"error"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		h.t.Fatalf("POST %s: %v\n%s", url, err, raw)
	}
	h.t.Logf("POST /slurm/v0.0.44/job/%d %s with %s's token: HTTP %d, errors %+v", id, body, user, resp.StatusCode, r.Errors)
	var nums []int
	for _, e := range r.Errors {
		nums = append(nums, e.Number)
	}
	return nums
}

// ctldLog reads slurmctld.log from the moment it was made.
type ctldLog struct {
	path string
	off  int64
}

func (h *guardIT) ctldLog() *ctldLog {
	h.t.Helper()
	p := filepath.Join(h.env.Root, "var/log/slurm/slurmctld.log")
	st, err := os.Stat(p)
	if err != nil {
		h.t.Fatal(err)
	}
	return &ctldLog{path: p, off: st.Size()}
}

// wait waits until slurmctld logged want and returns what it logged.
func (l *ctldLog) wait(t *testing.T, want string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(l.path)
		if err != nil {
			t.Fatal(err)
		}
		s := ""
		if int64(len(b)) > l.off {
			s = string(b[l.off:])
		}
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("slurmctld.log does not say %q; it logged:\n%s", want, s)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func logGuardLines(t *testing.T, s string) {
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, "gpubridge guard") {
			t.Logf("slurmctld.log: %s", line)
		}
	}
}

func refused(t *testing.T, what, out string, ok bool, want string) {
	t.Helper()
	t.Logf("%s: %s", what, strings.TrimSpace(out))
	if ok || !strings.Contains(out, want) {
		t.Errorf("%s: succeeded=%v, %q; want it refused with %q", what, ok, out, want)
	}
}

// TestGuardModifyBypassRefused: updates that would let a job escape a
// tenant's typed quota are refused by the real slurmctld, through scontrol
// and through slurmrestd: moving a pending untyped-GPU job into a tenant,
// adding an untyped or a shard request to a tenant's pending job, moving a
// job into a tenant being deleted; a shard request is refused at
// submission. A typed move is accepted (the refusals are the guard's, not
// a side effect of the update).
func TestGuardModifyBypassRefused(t *testing.T) {
	h := newGuardIT(t, map[string][]string{"g9acme": {"dave"}, "g9gone": {"dave"}, "g9plain": {"dave"}})
	h.writeTable([]tenant.Tenant{
		{Name: "g9acme", Users: []string{"dave"}, GPUs: tenant.Quota{"h100": 1}},
		{Name: "g9gone", Users: []string{"dave"}, GPUs: tenant.Quota{"h100": 1}, State: tenant.Deleting},
	})
	log := h.ctldLog()
	const untyped = "GPU request without a type refused for tenant g9acme"

	// A pending untyped job of an account that is not a tenant...
	j1 := h.mustSbatch("dave", "-A", "g9plain", "-p", "pool", "--hold", "--gres=gpu:1", "--wrap", "sleep 5")
	// ...may not move into the tenant, with scontrol or with slurmrestd.
	out, ok := h.run("dave", "scontrol", "update", fmt.Sprintf("jobid=%d", j1), "account=g9acme")
	refused(t, "scontrol update account=g9acme of an untyped job", out, ok, fmt.Sprintf("gpubridge: job %d: %s", j1, untyped))
	if got := h.field(j1, "%a"); got != "g9plain" {
		t.Errorf("job %d is in account %q after the refused update", j1, got)
	}
	if nums := h.restUpdate("dave", j1, `{"account":"g9acme"}`); len(nums) == 0 || nums[0] != 2072 {
		t.Errorf("REST update account=g9acme of an untyped job: errors %v; want 2072 (invalid GRES)", nums)
	}
	logGuardLines(t, log.wait(t, fmt.Sprintf("gpubridge guard: refused update of job %d (user dave, account g9acme): gpubridge: job %d: %s", j1, j1, untyped)))
	if got := h.field(j1, "%a"); got != "g9plain" {
		t.Errorf("job %d is in account %q after the refused REST update", j1, got)
	}

	// A typed job moves (the control).
	j2 := h.mustSbatch("dave", "-A", "g9plain", "-p", "pool", "--hold", "--gres=gpu:h100:1", "--wrap", "sleep 5")
	if out, ok := h.run("dave", "scontrol", "update", fmt.Sprintf("jobid=%d", j2), "account=g9acme"); !ok {
		t.Errorf("scontrol update account=g9acme of a typed job: %s", out)
	}
	if got := h.field(j2, "%a"); got != "g9acme" {
		t.Errorf("typed job %d is in account %q; want g9acme", j2, got)
	}

	// The tenant's pending job may not get an untyped, unreadable or shard request.
	for _, c := range []struct{ arg, want string }{
		{"gres=gpu:1", untyped},
		{"gres=gpu:h100:1,gpu:1", untyped},
		{"TresPerJob=gres/gpu:2", untyped},
		{"TresPerJob=gpu:2", untyped},
		{"TresPerTask=gres/gpu=1", untyped},
		{"TresPerNode=gres/GPU:1", untyped},
		{"gres=gpu:h100:1:1", "cannot read the GPU request"},
		{"gres=shard:1", "GPU sharing (gres/shard) refused for tenant g9acme: the tenant has no shard quota"},
	} {
		out, ok := h.run("dave", "scontrol", "update", fmt.Sprintf("jobid=%d", j2), c.arg)
		refused(t, "scontrol update "+c.arg+" of a tenant's job", out, ok, fmt.Sprintf("gpubridge: job %d: %s", j2, c.want))
	}
	if nums := h.restUpdate("dave", j2, `{"tres_per_job":"gres/gpu:2"}`); len(nums) == 0 || nums[0] != 2072 {
		t.Errorf("REST update tres_per_job=gres/gpu:2: errors %v; want 2072", nums)
	}
	if got := h.field(j2, "%b|%a"); got != "gres/gpu:h100:1|g9acme" {
		t.Errorf("job %d after the refused updates: %q; want gres/gpu:h100:1|g9acme", j2, got)
	}

	// A shard request at submission. sbatch itself refuses shard on this
	// testbed (its GresTypes has no shard) before slurmctld sees the job;
	// -M skips that client-side check, as a REST submission or a cluster
	// with shard configured would, and the guard refuses it first.
	id, msg := h.sbatch("dave", "-M", h.env.Cluster, "-A", "g9acme", "-p", "pool", "--gres=shard:1", "--wrap", "sleep 5")
	t.Logf("sbatch -M %s -A g9acme --gres=shard:1: job %d, %s", h.env.Cluster, id, strings.TrimSpace(msg))
	if id != 0 || !strings.Contains(msg, "GPU sharing (gres/shard) refused for tenant g9acme: the tenant has no shard quota") {
		t.Errorf("shard submission: job %d, %q; want the guard's refusal", id, msg)
	}
	id, msg = h.sbatch("dave", "-A", "g9acme", "-p", "pool", "--gpus-per-task=1", "-n", "1", "--wrap", "sleep 5")
	t.Logf("sbatch -A g9acme --gpus-per-task=1: job %d, %s", id, strings.TrimSpace(msg))
	if id != 0 || !strings.Contains(msg, untyped) {
		t.Errorf("untyped --gpus-per-task: job %d, %q; want the guard's refusal", id, msg)
	}

	// No job moves into a tenant being deleted, not even a typed one.
	j3 := h.mustSbatch("dave", "-A", "g9plain", "-p", "pool", "--hold", "--gres=gpu:h100:1", "--wrap", "sleep 5")
	out, ok = h.run("dave", "scontrol", "update", fmt.Sprintf("jobid=%d", j3), "account=g9gone")
	refused(t, "scontrol update account=g9gone (deleting)", out, ok, fmt.Sprintf("gpubridge: job %d: tenant g9gone is being deleted; jobs may not move into it", j3))
	if got := h.field(j3, "%a"); got != "g9plain" {
		t.Errorf("job %d is in account %q after the refused move", j3, got)
	}
}

// TestGuardTableCodeRefused: a tenant table that is Lua code, Lua bytecode
// or the old Lua format is refused and logged in slurmctld.log, never run
// (slurmctld keeps answering), and jobs keep being checked against the last
// good table; a good table written afterwards is used again.
func TestGuardTableCodeRefused(t *testing.T) {
	h := newGuardIT(t, map[string][]string{"g9code": {"dave"}})
	ts := []tenant.Tenant{{Name: "g9code", Users: []string{"dave"}, GPUs: tenant.Quota{"h100": 1}}}
	h.writeTable(ts)
	const untyped = "GPU request without a type refused for tenant g9code"
	submitUntyped := func(what string) {
		t.Helper()
		start := time.Now()
		id, msg := h.sbatch("dave", "-A", "g9code", "-p", "pool", "--gres=gpu:1", "--wrap", "sleep 5")
		t.Logf("sbatch --gres=gpu:1 %s (%.1f s): job %d, %s", what, time.Since(start).Seconds(), id, strings.TrimSpace(msg))
		if id != 0 || !strings.Contains(msg, untyped) {
			t.Errorf("untyped submission %s: job %d, %q; want it refused", what, id, msg)
		}
	}
	submitUntyped("with the good table") // the guard loads it (if it has not yet)

	luac := filepath.Join(t.TempDir(), "b.luac")
	cmd := exec.Command("luac5.1", "-o", luac, "-")
	cmd.Stdin = strings.NewReader("gpubridge_pwned = true\nreturn { version = 2, accounts = {} }\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("luac5.1: %v\n%s", err, out)
	}
	bytecode, err := os.ReadFile(luac)
	if err != nil || !bytes.HasPrefix(bytecode, []byte("\x1bLua")) {
		t.Fatalf("luac5.1 wrote no bytecode: %v %q", err, bytecode)
	}
	for _, c := range []struct {
		name string
		data []byte
		why  string
	}{
		{"Lua code", []byte("while true do end\n"), "it is not a gpubridge guard table"},
		{"Lua bytecode", bytecode, "it is Lua bytecode"},
		{"a version 1 table", []byte("-- gpubridge-guard v1 sha256:0123456789abcdef01234567\nreturn { version = 1, accounts = {} }\n"), "it is a version 1 table (a Lua chunk), refused"},
		// (a new table: a file whose header is the one loaded is not read again)
		{"a truncated table", tenant.Guard([]tenant.Tenant{{Name: "g9code", Users: []string{"dave"}, GPUs: tenant.Quota{"h100": 2}}})[:60], "the header says"},
	} {
		t.Run(c.name, func(t *testing.T) {
			log := h.ctldLog()
			h.replaceTable(c.data)
			submitUntyped("with " + c.name + " in place")
			typed := h.mustSbatch("dave", "-A", "g9code", "-p", "pool", "--hold", "--gres=gpu:h100:1", "--wrap", "sleep 5")
			h.try("scancel", strconv.FormatInt(typed, 10))
			s := log.wait(t, "gpubridge guard: refused "+guardPathInRoot+": "+c.why)
			if !strings.Contains(s, "jobs are checked against the last good table (1 tenant(s))") {
				t.Errorf("slurmctld.log does not say the last good table is used:\n%s", s)
			}
			logGuardLines(t, s)
		})
	}

	// A good table is used again: the tenant's quota type changes.
	log := h.ctldLog()
	ts[0].GPUs = tenant.Quota{"1g.10gb": 1}
	h.writeTable(ts)
	id, msg := h.sbatch("dave", "-A", "g9code", "-p", "pool", "--gres=gpu:h100:1", "--wrap", "sleep 5")
	if id != 0 || !strings.Contains(msg, "GPU type h100 is not in tenant g9code's quota. Tenant g9code may use: 1g.10gb (quota 1)") {
		t.Errorf("h100 after the new table: job %d, %q; want it refused against the new table", id, msg)
	}
	logGuardLines(t, log.wait(t, "gpubridge guard: loaded "))
}
