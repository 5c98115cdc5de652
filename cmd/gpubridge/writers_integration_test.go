//go:build integration

package main

// Acceptance of the safety rules for writers on the real testbed: an empty
// store never deletes the cluster (issue 9.1), and concurrent writers (two
// apply processes, modify commands and the daemon's reconcile) never
// diverge Slurm, the store and the guard file, nor lose an edit (9.2).
// Real processes: the gpubridge binary built from this tree, and `serve`.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/test/fault"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/writerlock"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// gpubridgeBin builds the binary of this tree once per test process
// ($GPUBRIDGE_IT_BIN names another one instead: an older build, to show
// what these tests catch).
func gpubridgeBin(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("GPUBRIDGE_IT_BIN"); b != "" {
		return b
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gpubridge-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "gpubridge")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// proc is a result of the binary.
type proc struct {
	out, err string
	code     int
}

// runBin runs the binary with env added to the test's environment.
func runBin(t *testing.T, env []string, args ...string) proc {
	t.Helper()
	cmd := exec.Command(gpubridgeBin(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	p := proc{out: out.String(), err: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		p.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("gpubridge %v: %v", args, err)
	}
	return p
}

// serveProc is a `gpubridge serve` process.
type serveProc struct {
	cmd  *exec.Cmd
	url  string
	mu   sync.Mutex
	logs bytes.Buffer
	done chan struct{}
}

func (d *serveProc) Write(b []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.logs.Write(b)
}

func (d *serveProc) log() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.logs.String()
}

// startServe runs serve with the daemon's reconcile every second (the
// other jobs off), env added to the test's environment; it is stopped
// (SIGTERM) when the test ends.
func startServe(t *testing.T, env ...string) *serveProc {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "gpubridge.yaml")
	if err := os.WriteFile(conf, []byte("version: 1\nschedules:\n  reconcile: \"@every 1s\"\n  burst: \"\"\n  ingest: \"\"\n  closePeriod: \"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	d := &serveProc{url: "http://" + addr, done: make(chan struct{})}
	d.cmd = exec.Command(gpubridgeBin(t), "--config", conf, "serve", "--listen", addr)
	d.cmd.Env = append(append(os.Environ(), "GPUBRIDGE_CONFIG="+conf, withMetricsListen(t, addr)), env...)
	d.cmd.Stdout, d.cmd.Stderr = d, d
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.cmd.Wait(); close(d.done) }()
	t.Cleanup(func() {
		d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(15 * time.Second):
			d.cmd.Process.Kill()
			<-d.done
		}
		if t.Failed() {
			t.Logf("serve log:\n%s", d.log())
		}
	})
	return d
}

// metric reads one sample of /metrics ("" when absent).
func (d *serveProc) metric(name string) string {
	resp, err := http.Get("http://" + metricsAddr(strings.TrimPrefix(d.url, "http://")) + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return v
		}
	}
	return ""
}

// waitMetric waits until the sample is at least min.
func (d *serveProc) waitMetric(t *testing.T, name string, min float64, timeout time.Duration) float64 {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		v, _ := strconv.ParseFloat(d.metric(name), 64)
		if v >= min {
			return v
		}
		select {
		case <-d.done:
			t.Fatalf("serve exited waiting for %s >= %g:\n%s", name, min, d.log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %g after %s; want >= %g", name, v, timeout, min)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// slurmCounts counts accounts, QOS, associations and slurmdbd
// transactions: all of the cluster, for "nothing changed".
func (h *tenantIT) slurmCounts() map[string]int {
	h.t.Helper()
	n := map[string]int{}
	for _, what := range []string{"accounts", "qos", "associations", "transactions"} {
		n[what] = len(strings.Split(strings.TrimSpace(h.sacctmgr("-n", "-P", "list", what)), "\n"))
	}
	return n
}

// TestTenantEmptyStoreChangesNothing: with tenants in Slurm, `apply` and the
// daemon's reconcile pointed at an empty gpubridge database change nothing
// in Slurm (objects and slurmdbd transactions counted before and after);
// the refusal is in apply's output, in plan, in serve's log and in
// /metrics (gpubridge_reconcile_refusals_total{reason="unrecorded"}).
func TestTenantEmptyStoreChangesNothing(t *testing.T) {
	h := newTenantIT(t, "t9emptya", "t9emptyb")
	h.ok("-i", "add", "tenant", "t9emptya", "gpus=h100:1", "users=alice,bob", "admins=alice")
	h.ok("-i", "add", "tenant", "t9emptyb", "gpus=1g.10gb:1", "users=carol")
	h.apply()
	_, empty := fault.ScratchDB(t, h.env, "t9", "empty") // migrated, no tenants
	guard := filepath.Join(t.TempDir(), "guard.lua")
	env := []string{"GPUBRIDGE_DB_DSN=" + empty, "GPUBRIDGE_GUARD_FILE=" + guard}
	before := h.slurmCounts()

	p := runBin(t, env, "-i", "apply")
	if p.code == 0 || !strings.Contains(p.err, "mass deletion refused (unrecorded)") || !strings.Contains(p.out, "! mass deletion refused: ") ||
		!strings.Contains(p.out, "t9emptya") || !strings.Contains(p.out, "t9emptyb") {
		t.Errorf("apply on an empty store: exit %d\nstdout:\n%s\nstderr:\n%s", p.code, p.out, p.err)
	}
	p = runBin(t, env, "--json", "plan")
	var plan applyJSON
	if err := json.Unmarshal([]byte(p.out), &plan); err != nil || p.code == 0 || plan.MassDelete == nil ||
		plan.MassDelete.Reason != reconcile.ReasonUnrecorded || plan.Writes != 0 {
		t.Errorf("plan on an empty store: exit %d, %v, %+v\n%s", p.code, err, plan.MassDelete, p.err)
	}

	d := startServe(t, env...)
	d.waitMetric(t, `gpubridge_reconcile_refusals_total{reason="unrecorded"}`, 2, 60*time.Second)
	d.waitMetric(t, `gpubridge_job_runs_total{job="reconcile",result="error"}`, 2, 10*time.Second)
	if !strings.Contains(d.log(), "plan refused: it deletes too much") || !strings.Contains(d.log(), "reason=unrecorded") {
		t.Errorf("serve's log does not say why:\n%s", d.log())
	}
	if after := h.slurmCounts(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("Slurm changed: before %v, after %v", before, after)
	}
	if _, err := os.Stat(guard); !os.IsNotExist(err) {
		t.Errorf("a guard file was written from the empty store (%v)", err)
	}
	for _, tn := range []string{"t9emptya", "t9emptyb"} {
		if out := h.sacctmgr("-n", "-P", "show", "account", tn, "format=account"); strings.TrimSpace(out) != tn {
			t.Errorf("account %s: %q", tn, out)
		}
	}
	t.Logf("Slurm objects and transactions, before and after: %v", before)
}

// TestTenantWritersRace: 20 rounds of two `apply -f` processes on the same
// tenants file, two `modify tenant` processes on another tenant and the
// daemon's reconcile (serve, every second), all at once. After each round
// Slurm equals the store, the guard file matches it, and every edit that
// reported success is in the store (a losing edit fails with "changed since
// you read it").
func TestTenantWritersRace(t *testing.T) {
	h := newTenantIT(t, "t9racea", "t9raceb", "t9racec")
	h.ok("-i", "add", "tenant", "t9racec", "gpus=h100:1", "users=dave")
	h.apply()
	d := startServe(t)

	db, err := sqldb.OpenMigrated(context.Background(), h.env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := tenantstore.New(db)
	lock := &writerlock.Lock{DB: db.DB, Cluster: h.env.Cluster, Holder: "TestTenantWritersRace (verifier)", Wait: time.Minute}
	guardPath := os.Getenv("GPUBRIDGE_GUARD_FILE")
	file := filepath.Join(t.TempDir(), "tenants.yaml")
	users := []string{"bob", "erin", "frank"} // one user joins t9racea, one leaves, each round
	t0 := time.Now()
	var lost, refused int
	for round := range 20 {
		quota := round%3 + 1
		os.WriteFile(file, []byte(fmt.Sprintf(`version: 1
tenants:
  - name: t9racea
    description: round %d
    users: [alice, %s]
    gpus: {h100: %d}
  - name: t9raceb
    users: [carol]
    gpus: {1g.10gb: %d}
`, round, users[round%3], quota, round%2+1)), 0o644)
		desc := fmt.Sprintf("edit-%d", round)
		cpus := strconv.Itoa(round + 1)
		var wg sync.WaitGroup
		res := make([]proc, 4)
		for i, args := range [][]string{
			{"-i", "apply", "-f", file},
			{"-i", "apply", "-f", file},
			{"-i", "modify", "tenant", "t9racec", "set", "description=" + desc},
			{"-i", "modify", "tenant", "t9racec", "set", "cpus=" + cpus},
		} {
			wg.Add(1)
			go func() { defer wg.Done(); res[i] = runBin(t, nil, args...) }()
		}
		wg.Wait()
		for i, p := range res {
			if p.code != 0 && !(i >= 2 && strings.Contains(p.err, "changed since you read it")) {
				t.Fatalf("round %d, writer %d: exit %d\nstdout:\n%s\nstderr:\n%s", round, i, p.code, p.out, p.err)
			}
			if p.code != 0 {
				refused++
			}
		}
		c, err := st.Get(context.Background(), "t9racec")
		if err != nil {
			t.Fatal(err)
		}
		if res[2].code == 0 && c.Description != desc {
			lost++
			t.Errorf("round %d: `modify set description=%s` succeeded but the store has %q", round, desc, c.Description)
		}
		if res[3].code == 0 && (c.CPUs == nil || strconv.FormatInt(*c.CPUs, 10) != cpus) {
			lost++
			t.Errorf("round %d: `modify set cpus=%s` succeeded but the store has %s", round, cpus, tenant.Fields(c)[6].Value)
		}
		if res[2].code != 0 && res[3].code != 0 {
			t.Errorf("round %d: both modifies were refused; the first to commit must win", round)
		}
		a, _ := st.Get(context.Background(), "t9racea")
		if a.Description != fmt.Sprintf("round %d", round) || a.GPUs["h100"] != int64(quota) {
			t.Errorf("round %d: t9racea in the store = %+v", round, a)
		}
		h.converged(t, round, lock, st, guardPath)
	}
	d.waitMetric(t, `gpubridge_job_runs_total{job="reconcile",result="ok"}`, 1, 5*time.Second)
	if v := d.metric(`gpubridge_job_runs_total{job="reconcile",result="error"}`); v != "" && v != "0" {
		t.Logf("daemon reconcile errors (e.g. waits for the writer lock): %s", v)
	}
	t.Logf("20 rounds in %s: %d modify(s) refused as concurrent edits, %d lost; daemon reconcile runs: %s ok",
		time.Since(t0).Round(time.Millisecond), refused, lost, d.metric(`gpubridge_job_runs_total{job="reconcile",result="ok"}`))
}

// converged waits (at most 10 s, for the daemon to apply the round's
// store-only edits) until, under the writer lock, Slurm holds exactly what
// the store says for the test's tenants (plan: nothing to change; the QOS
// limits read with sacctmgr) and the guard file is the store's.
func (h *tenantIT) converged(t *testing.T, round int, lock *writerlock.Lock, st *tenantstore.Store, guardPath string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		problem := func() string {
			release, err := lock.Acquire(context.Background())
			if err != nil {
				return err.Error()
			}
			defer release()
			p := runBin(t, nil, "--json", "plan")
			var plan applyJSON
			if err := json.Unmarshal([]byte(p.out), &plan); err != nil {
				return fmt.Sprintf("plan: exit %d %v: %s", p.code, err, p.err)
			}
			if left := mine(plan.Changes, "t9racea", "t9raceb", "t9racec"); len(left) > 0 {
				return fmt.Sprintf("Slurm differs from the store: %v", left)
			}
			ts, err := st.List(context.Background())
			if err != nil {
				return err.Error()
			}
			for _, tn := range ts {
				if !strings.HasPrefix(tn.Name, "t9race") {
					continue
				}
				want := tenant.GrpTRES(tn).String()
				if got := strings.TrimSpace(h.sacctmgr("-n", "-P", "show", "qos", tn.Name, "format=grptres")); got != want {
					return fmt.Sprintf("QOS %s GrpTRES %q; the store says %q", tn.Name, got, want)
				}
			}
			b, err := os.ReadFile(guardPath)
			if err != nil {
				return err.Error()
			}
			d := config.Default() // the names the test's gpubridge writes the table with
			n := tenant.Naming{QOSPrefix: d.Tenants.QOSPrefix, ReservationQOSSuffix: d.Bookings.ReservationQOSSuffix, ReservationPrefix: d.Bookings.ReservationPrefix}
			if want := tenant.GuardFor(ts, n); !bytes.Equal(b, want) {
				return fmt.Sprintf("the guard file is not the store's:\n%s\nwant:\n%s", b, want)
			}
			return ""
		}()
		if problem == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("round %d: %s", round, problem)
		}
		time.Sleep(300 * time.Millisecond)
	}
}
