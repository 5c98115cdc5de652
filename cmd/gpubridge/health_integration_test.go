//go:build integration

package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

func hltRun(args ...string) (int, string, string) {
	var out, errw bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errw)
	return code, out.String(), errw.String()
}

// TestHealthCLI drives the health commands on the testbed with a scratch
// gpubridge database and a config of its own: run-once admits gpu-a and
// cpu-a (burn-in, then serving), a tenant's check on cpu-a (which runs none
// of its jobs) is refused, its check on gpu-a runs and is shown to it, show
// health lists both nodes, resume node refuses a node in service. A second
// tenant on gpu-a checks it too; then a fault drains gpu-a, and the first
// tenant's history shows its use of gpu-a, its own check, the failing
// scheduled check and why gpu-a was drained, never the other tenant's
// check (which the other tenant's history holds).
func TestHealthCLI(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	tag := fmt.Sprintf("hltcli%04d", rand.IntN(10000))

	cfg, err := mysql.ParseDSN(env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sqldb.Open(ctx, env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = "gpubridge_" + tag
	if _, err := admin.Exec("CREATE DATABASE " + cfg.DBName); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GPUBRIDGE_DB_DSN", cfg.FormatDSN())

	svcAcct, tenantName, otherName := tag+"svc", tag+"ten", tag+"two"
	dir := "/tmp/" + tag
	if err := os.MkdirAll(filepath.Join(env.Root, dir), 0o1777); err != nil {
		t.Fatal(err)
	}
	cl, err := slurmrest.New(ctx, slurmrest.Options{URL: env.RestURL, JWTKeyFile: env.JWTKeyFile, User: "root"})
	if err != nil {
		t.Fatal(err)
	}
	var jobs []string
	t.Cleanup(func() {
		releaseHealthNodes(ctx, t, env, cl, []string{svcAcct, tenantName, otherName}, "gpu-a", "cpu-a")
		for _, a := range []string{svcAcct, tenantName, otherName} {
			_, _ = env.Run(ctx, "", nil, "sacctmgr", "-i", "delete", "user", "where", "account="+a)
			_, _ = env.Run(ctx, "", nil, "sacctmgr", "-i", "delete", "account", a)
		}
		os.RemoveAll(filepath.Join(env.Root, dir))
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + cfg.DBName); err != nil {
			t.Errorf("drop the scratch database: %v", err)
		}
		admin.Close()
	})
	env.Exec(t, "", "sacctmgr", "-i", "add", "account", svcAcct, "parent=root")
	env.Exec(t, "", "sacctmgr", "-i", "add", "user", "root", "account="+svcAcct)
	env.Exec(t, "", "sacctmgr", "-i", "add", "account", tenantName, "parent=root")
	env.Exec(t, "", "sacctmgr", "-i", "add", "user", "alice", "account="+tenantName)
	env.Exec(t, "", "sacctmgr", "-i", "add", "account", otherName, "parent=root")
	env.Exec(t, "", "sacctmgr", "-i", "add", "user", "bob", "account="+otherName)
	db, err := sqldb.OpenMigrated(ctx, cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tenantstore.New(db).Put(ctx, "test", []tenant.Tenant{{Name: tenantName, Users: []string{"alice"}, Admins: []string{"alice"},
		GPUs: tenant.Quota{"h100": 1}, State: tenant.Active}, {Name: otherName, Users: []string{"bob"}, Admins: []string{"bob"},
		GPUs: tenant.Quota{"h100": 1}, State: tenant.Active}}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	conf := filepath.Join(t.TempDir(), "gpubridge.yaml")
	yaml := fmt.Sprintf(`version: 1
health:
  nodes: [gpu-a, cpu-a]
  account: %s
  outputDir: %s
  localOutputDir: %s
  startWait: 30s
  acceptance:
    name: acceptance
    spec: "@every 5m"
    checks: [probe]
  schedules:
    - name: quick
      spec: "@every 10m"
      checks: [probe]
  checks:
    - name: probe
      command: "if [ -e %s/fault ]; then echo temp_c=95; echo reason=sensor hot; exit 1; fi; echo temp_c=41"
      timeout: 30s
      thresholds:
        "*": {temp_c: {max: 90}}
`, svcAcct, dir, filepath.Join(env.Root, dir), dir)
	if err := os.WriteFile(conf, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := func(args ...string) string {
		t.Helper()
		code, out, errs := hltRun(append([]string{"--config", conf}, args...)...)
		if code != 0 {
			t.Fatalf("gpubridge %s: exit %d: %s%s", strings.Join(args, " "), code, out, errs)
		}
		return out
	}
	out := ok("health", "run-once")
	for _, want := range []string{"new -> burn-in", "fence", "submitted"} {
		if !strings.Contains(out, want) {
			t.Errorf("first run-once lacks %q:\n%s", want, out)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		out = ok("show", "health", "-P", "-n")
		if strings.Count(out, "|serving|") == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Second)
		ok("health", "run-once")
	}
	if strings.Count(out, "|serving|") != 2 {
		t.Fatalf("nodes not serving after their acceptance runs:\n%s", out)
	}

	jobOut := env.Exec(t, "alice", "sbatch", "--parsable", "-A", tenantName, "-w", "gpu-a", "-t", "5", "-o", "/dev/null", "--wrap", "sleep 120")
	jobs = append(jobs, strings.TrimSpace(jobOut))
	for i := 0; i < 30; i++ {
		if s := env.Exec(t, "", "squeue", "-h", "-j", jobs[0], "-o", "%T"); strings.TrimSpace(s) == "RUNNING" {
			break
		}
		time.Sleep(time.Second)
	}
	code, _, errs := hltRun("--config", conf, "check", "node", "cpu-a", "tenant="+tenantName, "check=probe")
	if code != 1 || !strings.Contains(errs, "has no job running on cpu-a and no booking of it") {
		t.Fatalf("tenant check on cpu-a: exit %d: %s", code, errs)
	}
	out = ok("check", "node", "gpu-a", "tenant="+tenantName, "check=probe", "wait=60s", "-P")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "|gpu-a|probe|pass||temp_c=41|") || !strings.HasSuffix(lines[1], "|"+tenantName+"|tenant") {
		t.Fatalf("check node gpu-a as the tenant:\n%s", out)
	}
	runID := strings.Split(lines[1], "|")[1]
	jobID := strings.Split(lines[1], "|")[8]
	if acct := strings.TrimSpace(env.Exec(t, "", "sacct", "-X", "-n", "-P", "-j", jobID, "-o", "account")); acct != svcAcct {
		t.Errorf("the tenant's check ran under %q, want the health account %q", acct, svcAcct)
	}
	if out := ok("show", "checks", "tenant="+tenantName, "-P", "-n"); strings.Count(out, "\n") != 1 || !strings.Contains(out, "|"+runID+"|gpu-a|probe|pass|") {
		t.Errorf("show checks tenant=%s:\n%s", tenantName, out)
	}
	if out := ok("show", "checks", "-P", "-n"); strings.Count(out, "\n") < 3 {
		t.Errorf("show checks (admin): the acceptance runs and the tenant's:\n%s", out)
	}
	if out := ok("show", "health", "tenant="+tenantName, "-P", "-n"); !strings.HasPrefix(out, "gpu-a|serving|") || strings.Contains(out, "cpu-a") {
		t.Errorf("show health tenant=%s:\n%s", tenantName, out)
	}
	code, _, errs = hltRun("--config", conf, "-i", "resume", "node", "gpu-a")
	if code != 2 || !strings.Contains(errs, "gpu-a is serving, not held by gpubridge") {
		t.Errorf("resume node of a serving node: exit %d: %s", code, errs)
	}
	if _, err := strconv.Atoi(runID); err != nil {
		t.Errorf("run id %q", runID)
	}

	// The other tenant runs on gpu-a too and checks it.
	jobOut = env.Exec(t, "bob", "sbatch", "--parsable", "-A", otherName, "-w", "gpu-a", "-t", "5", "-o", "/dev/null", "--wrap", "sleep 120")
	jobs = append(jobs, strings.TrimSpace(jobOut))
	for i := 0; i < 30; i++ {
		if s := env.Exec(t, "", "squeue", "-h", "-j", jobs[1], "-o", "%T"); strings.TrimSpace(s) == "RUNNING" {
			break
		}
		time.Sleep(time.Second)
	}
	out = ok("check", "node", "gpu-a", "tenant="+otherName, "check=probe", "wait=60s", "-P", "-n")
	otherRun := strings.Split(strings.TrimSpace(out), "|")[1]
	if out := ok("show", "checks", "tenant="+tenantName, "-P", "-n"); strings.Contains(out, "|"+otherRun+"|") {
		t.Errorf("show checks tenant=%s shows %s's run %s:\n%s", tenantName, otherName, otherRun, out)
	}
	// A fault: the quick schedule's run fails, the next cycle drains.
	if err := os.WriteFile(filepath.Join(env.Root, dir, "fault"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ok("health", "run-once", "schedule=quick")
	deadline = time.Now().Add(60 * time.Second)
	for !strings.Contains(ok("show", "health", "node=gpu-a", "-P", "-n"), "|drained|") {
		if time.Now().After(deadline) {
			t.Fatalf("gpu-a not drained:\n%s", ok("show", "health"))
		}
		time.Sleep(2 * time.Second)
		ok("health", "run-once", "schedule=quick")
	}
	os.Remove(filepath.Join(env.Root, dir, "fault"))
	hist := ok("show", "health", "history", "tenant="+tenantName, "-P", "-n")
	for _, want := range []string{
		"|gpu-a|state|serving -> drained: probe failed: sensor hot (exit 1); temp_c=95 > 90 (h100)",
		"|gpu-a|check|probe fail: sensor hot (exit 1); temp_c=95 > 90 (h100) (temp_c=95) [run ",
		"|gpu-a|check|probe pass (temp_c=41) [run " + runID + ", tenant]",
		"|gpu-a|used|its jobs ran here ",
	} {
		if !strings.Contains(hist, want) {
			t.Errorf("%s's history lacks %q:\n%s", tenantName, want, hist)
		}
	}
	if strings.Contains(hist, "[run "+otherRun+",") || strings.Contains(hist, "cpu-a") {
		t.Errorf("%s's history shows %s's run %s or a node it never used:\n%s", tenantName, otherName, otherRun, hist)
	}
	if h := ok("show", "health", "history", "tenant="+otherName, "-P", "-n"); !strings.Contains(h, "[run "+otherRun+", tenant]") || strings.Contains(h, "[run "+runID+",") {
		t.Errorf("%s's history:\n%s", otherName, h)
	}
	code, shown, errs := hltRun("--config", conf, "show", "health", "history", "tenant="+tenantName)
	if code != 0 {
		t.Errorf("show health history as root: exit %d: %s", code, errs)
	}
	t.Logf("$ gpubridge show health history tenant=%s\n%s", tenantName, shown)
	_, shown, _ = hltRun("--config", conf, "show", "checks", "node=gpu-a", "limit=4")
	t.Logf("$ gpubridge show checks node=gpu-a limit=4\n%s", shown)
}
