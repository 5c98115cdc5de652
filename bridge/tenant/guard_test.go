package tenant

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGuardDeterministic(t *testing.T) {
	ts := sampleTenants()
	a := Guard(ts)
	rev := []Tenant{ts[2], ts[0], ts[1]}
	b := Guard(rev)
	if !bytes.Equal(a, b) {
		t.Errorf("Guard depends on input order:\n%s\n---\n%s", a, b)
	}
	if !strings.HasPrefix(string(a), "-- gpubridge-guard v1 sha256:") {
		t.Errorf("first line is not the digest header: %q", strings.SplitN(string(a), "\n", 2)[0])
	}
	ts[0].GPUs["h100"]++
	if c := Guard(ts); strings.SplitN(string(c), "\n", 2)[0] == strings.SplitN(string(a), "\n", 2)[0] {
		t.Error("a quota change did not change the digest line")
	}
}

func sampleTenants() []Tenant {
	return []Tenant{
		{Name: "acme", Users: []string{"alice", "bob"}, GPUs: Quota{"h100": 2, "1g.10gb": 2}},
		{Name: "globex", Users: []string{"carol"}, State: Deleting, GPUs: Quota{"h100": 1}},
		{Name: "cpuonly", Users: []string{"dave"}},
	}
}

// TestGuardLua runs contrib/job_submit.lua under lua5.1 (Slurm's Lua) with
// a stub slurm table, against a data file rendered by Guard.
func TestGuardLua(t *testing.T) {
	lua, err := exec.LookPath("lua5.1")
	if err != nil {
		t.Skip("lua5.1 is not installed (apt-get install lua5.1); the testbed integration test covers the guard too")
	}
	script, err := filepath.Abs("../../contrib/job_submit.lua")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "tenants.lua")
	if err := os.WriteFile(data, Guard(sampleTenants()), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		job  string // Lua table constructor of job_desc
		uid  int
		want string // "ok" or a substring of the refusal
	}{
		"typed within quota":        {job: `{account="acme", user_name="alice", tres_per_node="gres/gpu:h100:1"}`, want: "ok"},
		"MIG typed":                 {job: `{account="acme", user_name="bob", tres_per_node="gres/gpu:1g.10gb:1"}`, want: "ok"},
		"untyped gres":              {job: `{account="acme", user_name="alice", tres_per_node="gres/gpu:1"}`, want: "GPU request without a type refused for tenant acme"},
		"untyped names types":       {job: `{account="acme", user_name="alice", tres_per_node="gres/gpu:1"}`, want: "may use: 1g.10gb (quota 2), h100 (quota 2)"},
		"untyped no count":          {job: `{account="acme", user_name="alice", tres_per_node="gres/gpu"}`, want: "without a type"},
		"untyped --gpus":            {job: `{account="acme", user_name="alice", tres_per_job="gres/gpu:2"}`, want: "without a type"},
		"old form untyped":          {job: `{account="acme", user_name="alice", tres_per_node="gpu:1"}`, want: "without a type"},
		"type outside quota":        {job: `{account="acme", user_name="alice", tres_per_node="gres/gpu:3g.40gb:1"}`, want: "GPU type 3g.40gb is not in tenant acme's quota"},
		"mixed list":                {job: `{account="acme", user_name="alice", tres_per_node="gres/shard:1,gres/gpu:2"}`, want: "without a type"},
		"no GPUs":                   {job: `{account="acme", user_name="alice"}`, want: "ok"},
		"default account":           {job: `{default_account="acme", user_name="alice", tres_per_node="gres/gpu:1"}`, want: "without a type"},
		"upper-case account":        {job: `{account="ACME", user_name="alice", tres_per_node="gres/gpu:1"}`, want: "without a type"},
		"not a tenant":              {job: `{account="physics", user_name="alice", tres_per_node="gres/gpu:1"}`, want: "ok"},
		"deleting tenant":           {job: `{account="globex", user_name="carol"}`, want: "tenant globex is being deleted"},
		"not a member":              {job: `{account="acme", user_name="carol", tres_per_node="gres/gpu:h100:1"}`, want: "user carol is not a member of tenant acme"},
		"root may submit as anyone": {job: `{account="acme", user_name="root", tres_per_node="gres/gpu:h100:1"}`, uid: 0, want: "ok"},
		"no quota tenant":           {job: `{account="cpuonly", user_name="dave", tres_per_node="gres/gpu:h100:1"}`, want: "tenant cpuonly has no GPU quota"},
		"zero count untyped":        {job: `{account="acme", user_name="alice", tres_per_node="gres/gpu:0"}`, want: "ok"},
	}
	var b strings.Builder
	b.WriteString(`
slurm = { SUCCESS = 0, ERROR = -1, ESLURM_INVALID_GRES = 2072 }
local last = ""
function slurm.log_info(...) end
function slurm.log_error(...) end
function slurm.log_user(fmt, ...) last = string.format(fmt, ...) end
dofile(arg[1])
local function run(name, job, uid)
  last = ""
  local rc = slurm_job_submit(job, {}, uid)
  if rc == slurm.SUCCESS then print(name .. "\tok") else print(name .. "\t" .. last) end
end
`)
	for name, c := range cases {
		uid := c.uid
		if uid == 0 && !strings.Contains(name, "root") {
			uid = 1000
		}
		b.WriteString("run(" + luaQuote(name) + ", " + c.job + ", " + itoa(uid) + ")\n")
	}
	harness := filepath.Join(dir, "harness.lua")
	if err := os.WriteFile(harness, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(lua, harness, script)
	cmd.Env = append(os.Environ(), "GPUBRIDGE_GUARD_FILE="+data)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("lua5.1: %v\n%s", err, out)
	}
	got := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		name, res, _ := strings.Cut(line, "\t")
		got[name] = res
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			res, ok := got[name]
			if !ok {
				t.Fatalf("no result; output:\n%s", out)
			}
			if c.want == "ok" && res != "ok" || c.want != "ok" && !strings.Contains(res, c.want) {
				t.Errorf("got %q, want %q", res, c.want)
			}
		})
	}
}

func TestGuardLuaMissingFileFailsOpen(t *testing.T) {
	lua, err := exec.LookPath("lua5.1")
	if err != nil {
		t.Skip("lua5.1 is not installed")
	}
	script, _ := filepath.Abs("../../contrib/job_submit.lua")
	harness := filepath.Join(t.TempDir(), "h.lua")
	os.WriteFile(harness, []byte(`
slurm = { SUCCESS = 0, ERROR = -1 }
local errors = 0
function slurm.log_info(...) end
function slurm.log_error(...) errors = errors + 1 end
function slurm.log_user(...) end
dofile(arg[1])
local rc1 = slurm_job_submit({account="acme", tres_per_node="gres/gpu:1"}, {}, 1000)
local rc2 = slurm_job_submit({account="acme", tres_per_node="gres/gpu:1"}, {}, 1000)
print(rc1, rc2, errors)
`), 0o644)
	cmd := exec.Command(lua, harness, script)
	cmd.Env = append(os.Environ(), "GPUBRIDGE_GUARD_FILE=/nonexistent/gpubridge-tenants.lua")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("lua5.1: %v\n%s", err, out)
	}
	if diff := cmp.Diff("0\t0\t1", strings.TrimSpace(string(out))); diff != "" {
		t.Errorf("rc1, rc2, logged errors (-want +got):\n%s", diff)
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var d []byte
	for n > 0 {
		d = append([]byte{byte('0' + n%10)}, d...)
		n /= 10
	}
	return string(d)
}
