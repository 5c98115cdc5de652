//go:build integration

package main

// Acceptance tests of the burst controller on the real testbed (Slurm 26.05,
// slurmrestd, MariaDB). They create their own Slurm objects (accounts and
// QOS b5a and b5b, association of alice and bob) with sacctmgr, pass tenants
// and rates as files (so the shared tenant store and rate card are left
// alone), and cancel their jobs once their state is asserted.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/slurmrest"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

const (
	b5RateCard = `version: 1
currency: EUR
rates:
  - type: h100
    tier: reserved
    perGPUHour: "2.00"
    from: 2020-01-01
  - type: h100
    tier: ondemand
    perGPUHour: "6.00"
    from: 2020-01-01
`
	b5JobMinutes = 10 // time limit of the test jobs: 1 GPU x 10 min at 6.00/h = 1.00
)

// b5 is one test's handle on the testbed.
type b5 struct {
	t    *testing.T
	env  testbed.Env
	cl   *slurmrest.Client
	dir  string
	jobs []int64
}

func newB5(t *testing.T) *b5 {
	t.Helper()
	env := testbed.Require(t)
	if env.DBDSN == "" {
		t.Fatal("GPUBRIDGE_DB_DSN is unset: `source .testbed/env`")
	}
	cl, err := slurmrest.New(context.Background(), slurmrest.Options{URL: env.RestURL, JWTKeyFile: env.JWTKeyFile, User: "root"})
	if err != nil {
		t.Fatal(err)
	}
	h := &b5{t: t, env: env, cl: cl, dir: t.TempDir()}
	if err := os.WriteFile(filepath.Join(h.dir, "rates.yaml"), []byte(b5RateCard), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.cancelAll)
	return h
}

// tenant (re)creates account and QOS name with an h100 quota and gives user
// an association with QOS [name, ondemand], default name.
func (h *b5) tenant(name, user string, quota int) {
	h.t.Helper()
	ctx := context.Background()
	try := func(args ...string) { _, _ = h.env.Run(ctx, "", nil, args...) }
	try("sacctmgr", "-i", "add", "qos", "ondemand")
	try("sacctmgr", "-i", "add", "qos", name)
	h.env.Exec(h.t, "", "sacctmgr", "-i", "modify", "qos", "where", "name="+name, "set", fmt.Sprintf("GrpTRES=gres/gpu:h100=%d", quota))
	try("sacctmgr", "-i", "add", "account", name, "parent=root")
	try("sacctmgr", "-i", "add", "user", user, "account="+name)
	h.env.Exec(h.t, "", "sacctmgr", "-i", "modify", "user", "where", "name="+user, "account="+name, "set", "qos="+name+",ondemand", "defaultqos="+name)
	out := h.env.Exec(h.t, "", "sacctmgr", "-n", "-P", "list", "assoc", "account="+name, "user="+user, "format=qos,defaultqos")
	if !strings.Contains(out, "ondemand") || !strings.Contains(out, "|"+name) {
		h.t.Fatalf("association of %s in %s: %q", user, name, out)
	}
	h.cancelAccount(name)
}

// tenants writes the tenants file the CLI reads with --tenants.
func (h *b5) tenants(yaml string) string {
	h.t.Helper()
	p := filepath.Join(h.dir, "tenants.yaml")
	if err := os.WriteFile(p, []byte("version: 1\ntenants:\n"+yaml), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// submit submits n 1-GPU h100 jobs as user under account and returns their ids.
func (h *b5) submit(user, account string, n int, extra ...string) []int64 {
	h.t.Helper()
	var ids []int64
	for range n {
		args := append([]string{"sbatch", "--parsable", "-A", account, "--gres=gpu:h100:1", "-t", strconv.Itoa(b5JobMinutes),
			"-o", "/dev/null", "-J", "b5test"}, extra...)
		args = append(args, "--wrap", "sleep 600")
		out := h.env.Exec(h.t, user, args...)
		id, err := strconv.ParseInt(strings.TrimSpace(strings.Split(out, ";")[0]), 10, 64)
		if err != nil {
			h.t.Fatalf("sbatch: %q", out)
		}
		ids = append(ids, id)
		h.jobs = append(h.jobs, id)
	}
	return ids
}

func (h *b5) cancelAccount(account string) {
	_, _ = h.env.Run(context.Background(), "", nil, "scancel", "-A", account)
}

func (h *b5) cancelAll() {
	if len(h.jobs) == 0 {
		return
	}
	args := []string{"scancel"}
	for _, id := range h.jobs {
		args = append(args, strconv.FormatInt(id, 10))
	}
	_, _ = h.env.Run(context.Background(), "", nil, args...)
}

func (h *b5) job(id int64) slurmrest.Job {
	h.t.Helper()
	j, err := h.cl.GetJob(context.Background(), id)
	if err != nil {
		h.t.Fatalf("get job %d: %v", id, err)
	}
	return j
}

// waitFor polls cond every 500ms until it holds or timeout passes.
func (h *b5) waitFor(what string, timeout time.Duration, cond func() (bool, string)) time.Duration {
	h.t.Helper()
	start := time.Now()
	var last string
	for time.Since(start) < timeout {
		ok, s := cond()
		if ok {
			return time.Since(start)
		}
		last = s
		time.Sleep(500 * time.Millisecond)
	}
	h.t.Fatalf("%s: not within %s; last: %s", what, timeout, last)
	return 0
}

func (h *b5) states(ids []int64) (map[string]int, string) {
	counts := map[string]int{}
	var desc []string
	for _, id := range ids {
		j := h.job(id)
		key := j.Partition + "/" + strings.Join(j.State, "+")
		counts[key]++
		desc = append(desc, fmt.Sprintf("%d:%s/%s/%s", id, key, j.QOS, j.Reason))
	}
	return counts, strings.Join(desc, " ")
}

// waitHeld waits until running jobs run in the pool and the rest pend on
// their tenant QOS limit.
func (h *b5) waitHeld(ids []int64, running int) {
	h.t.Helper()
	h.waitFor(fmt.Sprintf("%d of %d jobs running in pool, the rest QOSGrpGRES", running, len(ids)), 60*time.Second, func() (bool, string) {
		c, s := h.states(ids)
		held := 0
		for _, id := range ids {
			if j := h.job(id); j.HasState("PENDING") && j.Reason == "QOSGrpGRES" {
				held++
			}
		}
		return c["pool/RUNNING"] == running && held == len(ids)-running, s
	})
}

// cli runs gpubridge in-process with the testbed's environment.
func (h *b5) cli(args ...string) (string, int) {
	var out, errw bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errw)
	if code != 0 {
		h.t.Logf("gpubridge %s: exit %d: %s", strings.Join(args, " "), code, errw.String())
	}
	return out.String(), code
}

func (h *b5) cliOK(args ...string) string {
	h.t.Helper()
	out, code := h.cli(args...)
	if code != 0 {
		h.t.Fatalf("gpubridge %s: exit %d", strings.Join(args, " "), code)
	}
	return out
}

// runOnce runs one cycle with the test's tenants and rates.
func (h *b5) runOnce(tenants string) []actionRow {
	h.t.Helper()
	var rows []actionRow
	out := h.cliOK("burst", "run-once", "--tenants", tenants, "--rate-card", filepath.Join(h.dir, "rates.yaml"), "--json")
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		h.t.Fatalf("run-once --json: %v: %s", err, out)
	}
	return rows
}

type showBurst struct {
	Jobs    []burstJobRow    `json:"jobs"`
	Tenants []burstTenantRow `json:"tenants"`
}

func (h *b5) show(tenants, tenant string) showBurst {
	h.t.Helper()
	var s showBurst
	out := h.cliOK("show", "burst", "tenant="+tenant, "--tenants", tenants, "--rate-card", filepath.Join(h.dir, "rates.yaml"), "--json")
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		h.t.Fatalf("show burst --json: %v: %s", err, out)
	}
	return s
}

func rowOf(rows []burstJobRow, id int64) (burstJobRow, bool) {
	i := slices.IndexFunc(rows, func(r burstJobRow) bool { return r.JobID == id })
	if i < 0 {
		return burstJobRow{}, false
	}
	return rows[i], true
}

func movedIDs(rows []actionRow) []int64 {
	var ids []int64
	for _, r := range rows {
		if r.Action == "moved" {
			ids = append(ids, r.JobID)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestBurstAcceptanceMoves: quota h100=2, three 1-GPU jobs: two run in the
// pool, the third is moved within two poll intervals and runs on demand;
// show burst lists it with the reason; a second cycle moves nothing.
func TestBurstAcceptanceMoves(t *testing.T) {
	h := newB5(t)
	h.tenant("b5a", "alice", 2)
	tf := h.tenants("  - {name: b5a, users: [alice], gpus: {h100: 2}, burst: {enabled: true, maxOnDemandGPUs: 2}}\n")

	// The controller polls every interval, as the daemon does.
	const interval = 5 * time.Second
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var movedAt = make(chan time.Time, 4)
	go func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			var out, errw bytes.Buffer
			run([]string{"burst", "run-once", "--tenants", tf, "--json"}, strings.NewReader(""), &out, &errw)
			var rows []actionRow
			if json.Unmarshal(out.Bytes(), &rows) == nil && len(movedIDs(rows)) > 0 {
				movedAt <- time.Now()
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()

	ids := h.submit("alice", "b5a", 3)
	submitted := time.Now()
	var at time.Time
	select {
	case at = <-movedAt:
	case <-time.After(2*interval + 10*time.Second):
		_, s := h.states(ids)
		t.Fatalf("no job moved within %s: %s", 2*interval+10*time.Second, s)
	}
	reaction := at.Sub(submitted)
	t.Logf("reaction: third job moved %s after submission (poll interval %s)", reaction.Round(10*time.Millisecond), interval)
	if reaction > 2*interval {
		t.Errorf("moved after %s, want within two poll intervals (%s)", reaction, 2*interval)
	}
	stop()

	third := ids[2]
	h.waitFor("two pool jobs and the third running on demand", 60*time.Second, func() (bool, string) {
		c, s := h.states(ids)
		return c["pool/RUNNING"] == 2 && c["ondemand/RUNNING"] == 1, s
	})
	var moved int64
	for _, id := range ids {
		if j := h.job(id); j.Partition == "ondemand" {
			moved = id
			if j.QOS != "ondemand" {
				t.Errorf("moved job %d has QOS %q, want ondemand", id, j.QOS)
			}
			m, ok := burst.ParseMarker(j.AdminComment)
			if !ok || m.Reason != "QOSGrpGRES" || m.Partition != "pool" || m.QOS != "b5a" || m.GPUs != "h100:1" {
				t.Errorf("admin comment %q lacks the marker (moved, reason QOSGrpGRES, from pool/b5a, h100:1)", j.AdminComment)
			}
		}
	}
	if moved != third {
		t.Logf("note: slurm started jobs out of submit order; moved job %d", moved)
	}

	s := h.show(tf, "b5a")
	r, ok := rowOf(s.Jobs, moved)
	if !ok || r.Status != "bursting" || r.Reason != "QOSGrpGRES" || r.State != "RUNNING" || r.GPUs != "h100:1" || r.Since.IsZero() {
		t.Errorf("show burst does not list job %d as bursting with its reason: %+v", moved, s.Jobs)
	}
	if len(s.Tenants) != 1 || s.Tenants[0].OnDemandGPUs != 1 || !s.Tenants[0].Burst {
		t.Errorf("show burst tenants = %+v", s.Tenants)
	}
	// -P is the same table in sacctmgr's form.
	p := h.cliOK("show", "burst", "tenant=b5a", "--tenants", tf, "-P")
	if !strings.Contains(p, "Tenant|JobID|User|Status|State|GPUs|Since|Reason|Detail") ||
		!strings.Contains(p, fmt.Sprintf("b5a|%d|alice|bursting|RUNNING|h100:1|", moved)) {
		t.Errorf("show burst -P:\n%s", p)
	}
	t.Logf("show burst tenant=b5a:\n%s", h.cliOK("show", "burst", "tenant=b5a", "--tenants", tf))

	// Level-triggered: another cycle moves nothing.
	if rows := h.runOnce(tf); len(movedIDs(rows)) != 0 {
		t.Errorf("second cycle moved %v", movedIDs(rows))
	}
}

// TestBurstAcceptanceRefusals: burst disabled, cap reached, budget spent:
// further jobs stay pending in the pool with a visible reason.
func TestBurstAcceptanceRefusals(t *testing.T) {
	h := newB5(t)
	h.tenant("b5a", "alice", 2)
	ids := h.submit("alice", "b5a", 5)
	h.waitHeld(ids, 2)
	held := func() []int64 {
		var out []int64
		for _, id := range ids {
			if j := h.job(id); j.HasState("PENDING") && j.Partition == "pool" {
				out = append(out, id)
			}
		}
		return out
	}

	// Disabled: nothing moves; show burst says why.
	tf := h.tenants("  - {name: b5a, users: [alice], gpus: {h100: 2}, burst: {enabled: false, maxOnDemandGPUs: 4}}\n")
	if rows := h.runOnce(tf); len(movedIDs(rows)) != 0 {
		t.Fatalf("disabled tenant: moved %v", movedIDs(rows))
	}
	s := h.show(tf, "b5a")
	for _, id := range held() {
		r, ok := rowOf(s.Jobs, id)
		if !ok || r.Status != "refused" || r.Reason != string(burst.Disabled) || !strings.Contains(r.Detail, "disabled") {
			t.Errorf("job %d: show burst = %+v, want refused/disabled", id, r)
		}
	}
	if len(held()) != 3 {
		t.Errorf("held jobs = %v, want 3 pending in the pool", held())
	}

	// Budget: 1 GPU x 10 min at 6.00/h is 1.00 per job; a budget of
	// what is already booked + 1.50 lets exactly one job go.
	spent := h.show(tf, "b5a").Tenants[0].Spent
	sp, err := strconv.ParseFloat(spent, 64)
	if err != nil {
		t.Fatal(err)
	}
	budget := fmt.Sprintf("%.2f", sp+1.50)
	tf = h.tenants(fmt.Sprintf("  - {name: b5a, users: [alice], gpus: {h100: 2}, burst: {enabled: true, maxOnDemandGPUs: 4, monthlyBudget: %q}}\n", budget))
	rows := h.runOnce(tf)
	if got := movedIDs(rows); len(got) != 1 {
		t.Fatalf("budget %s: moved %v, want one job", budget, got)
	}
	s = h.show(tf, "b5a")
	for _, id := range held() {
		r, ok := rowOf(s.Jobs, id)
		if !ok || r.Reason != string(burst.Budget) || !strings.Contains(r.Detail, "budget of "+budget) {
			t.Errorf("job %d: show burst = %+v, want refused/budget", id, r)
		}
	}
	if tn := s.Tenants[0]; tn.InFlight != "1.00" || tn.Left != "0.50" {
		t.Errorf("tenant position = %+v, want 1.00 in flight and 0.50 left", tn)
	}

	// Cap: one on-demand GPU in use, cap 1: the rest stay, reason cap.
	tf = h.tenants("  - {name: b5a, users: [alice], gpus: {h100: 2}, burst: {enabled: true, maxOnDemandGPUs: 1}}\n")
	if rows := h.runOnce(tf); len(movedIDs(rows)) != 0 {
		t.Fatalf("cap 1 reached: moved %v", movedIDs(rows))
	}
	s = h.show(tf, "b5a")
	for _, id := range held() {
		r, ok := rowOf(s.Jobs, id)
		if !ok || r.Reason != string(burst.Cap) || !strings.Contains(r.Detail, "1 of the cap of 1 in use") {
			t.Errorf("job %d: show burst = %+v, want refused/cap", id, r)
		}
	}
	if len(held()) != 2 {
		t.Errorf("held jobs = %v, want 2 pending in the pool", held())
	}
	t.Logf("show burst tenant=b5a:\n%s", h.cliOK("show", "burst", "tenant=b5a", "--tenants", tf, "--rate-card", filepath.Join(h.dir, "rates.yaml")))

	// Opt-out: explicit --qos other than the tenant's. (The comment token
	// is covered by unit tests: the testbed's placeholder job_submit.lua
	// overwrites job comments.)
	tf = h.tenants("  - {name: b5a, users: [alice], gpus: {h100: 2}, burst: {enabled: true, maxOnDemandGPUs: 4}}\n")
	_, _ = h.env.Run(context.Background(), "", nil, "sacctmgr", "-i", "add", "qos", "b5other")
	h.env.Exec(t, "", "sacctmgr", "-i", "modify", "qos", "where", "name=b5other", "set", "GrpTRES=gres/gpu:h100=0")
	h.env.Exec(t, "", "sacctmgr", "-i", "modify", "user", "where", "name=alice", "account=b5a", "set", "qos=b5a,ondemand,b5other")
	defer h.env.Exec(t, "", "sacctmgr", "-i", "modify", "user", "where", "name=alice", "account=b5a", "set", "qos=b5a,ondemand")
	opt := h.submit("alice", "b5a", 1, "--qos=b5other")[0]
	h.waitFor("opted-out job held by QOS b5other", 30*time.Second, func() (bool, string) {
		j := h.job(opt)
		return j.Reason == "QOSGrpGRES", j.Reason
	})
	h.runOnce(tf)
	if j := h.job(opt); j.Partition != "pool" || j.QOS != "b5other" {
		t.Errorf("opted-out job moved: %s/%s", j.Partition, j.QOS)
	}
	r, ok := rowOf(h.show(tf, "b5a").Jobs, opt)
	if !ok || r.Reason != string(burst.OptedOut) {
		t.Errorf("opted-out job: show burst = %+v", r)
	}
}
