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
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/burst/store"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/sqldb"
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
// actionRow, burstJobRow and burstTenantRow are the --json rows of burst
// run-once and show burst.
type (
	actionRow      = burst.ActionRow
	burstJobRow    = burst.OverviewJob
	burstTenantRow = burst.OverviewTenant
)

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
	h.needH100(3)
	tf := h.tenants("  - {name: b5a, users: [alice], gpus: {h100: 2}, burst: {enabled: true, maxOnDemandGPUs: 2}}\n")

	// The controller polls every interval, as the daemon does: built once
	// (client and database open), one cycle per tick; 10s is the default
	// schedules.burst.
	const interval = 10 * time.Second
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	a := &App{Env: &app.Env{Stderr: io.Discard}, in: strings.NewReader(""), out: io.Discard, err: io.Discard}
	_, err := a.Config()
	if err != nil {
		t.Fatal(err)
	}
	ctrl, err := a.Burst(ctx, tf, "")
	if err != nil {
		t.Fatal(err)
	}
	movedAt := make(chan time.Time, 4)
	go func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			if res, err := ctrl.Cycle(ctx); err == nil && len(res.Moved) > 0 {
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
	heldAfter := make(chan time.Duration, 1)
	go func() { // when slurmctld first reports a quota hold
		for time.Since(submitted) < time.Minute {
			for _, id := range ids {
				if j, err := h.cl.GetJob(ctx, id); err == nil && j.Reason == "QOSGrpGRES" {
					heldAfter <- time.Since(submitted)
					return
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	var at time.Time
	select {
	case at = <-movedAt:
	case <-time.After(2*interval + 10*time.Second):
		_, s := h.states(ids)
		t.Fatalf("no job moved within %s: %s", 2*interval+10*time.Second, s)
	}
	reaction := at.Sub(submitted)
	held := "?"
	select {
	case d := <-heldAfter:
		held = d.Round(10 * time.Millisecond).String()
	default:
	}
	t.Logf("reaction: third job moved %s after submission; slurmctld reported QOSGrpGRES after %s (poll interval %s)",
		reaction.Round(10*time.Millisecond), held, interval)
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
	h.needH100(3)
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

	// Opt-out: explicit --qos other than the tenant's.
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

	// Opt-out by comment token (when the site's job_submit.lua keeps
	// comments; the testbed's early placeholder overwrote them).
	tok := h.submit("alice", "b5a", 1, "--comment=gpubridge:noburst")[0]
	if c := h.job(tok).Comment; !strings.Contains(c, burst.NoBurstToken) {
		t.Logf("job comment is %q: job_submit.lua replaced it, the token case is left to the unit tests", c)
		return
	}
	h.waitFor("token job held by the quota", 30*time.Second, func() (bool, string) {
		j := h.job(tok)
		return j.Reason == "QOSGrpGRES", j.Reason
	})
	h.runOnce(tf)
	if j := h.job(tok); j.Partition != "pool" {
		t.Errorf("job with %s moved to %s", burst.NoBurstToken, j.Partition)
	}
	if r, ok := rowOf(h.show(tf, "b5a").Jobs, tok); !ok || r.Reason != string(burst.OptedOut) || !strings.Contains(r.Detail, burst.NoBurstToken) {
		t.Errorf("token job: show burst = %+v", r)
	}
}

// TestBurstAcceptancePreemption: with the GPUs full of on-demand work, a
// reserved job of another tenant preempts an on-demand job, which is
// requeued and runs again; every run is billed by where it ran, on-demand
// runs at the on-demand rate, and reserved + ondemand equals the total,
// checked against an independent recomputation from sacct.
func TestBurstAcceptancePreemption(t *testing.T) {
	h := newB5(t)
	h.tenant("b5a", "alice", 1)
	h.tenant("b5b", "bob", 1)
	free := h.needH100(2)
	tf := h.tenants("  - {name: b5a, users: [alice], gpus: {h100: 1}, burst: {enabled: true, maxOnDemandGPUs: 8}}\n" +
		"  - {name: b5b, users: [bob], gpus: {h100: 1}, burst: {enabled: false}}\n")
	start := time.Now().Add(-time.Minute)

	// Fill every free h100: one in the pool, the rest moved on demand.
	ids := h.submit("alice", "b5a", free)
	h.waitHeld(ids, 1)
	if got := movedIDs(h.runOnce(tf)); len(got) != free-1 {
		t.Fatalf("moved %v, want %d jobs", got, free-1)
	}
	h.waitFor("all GPUs busy: 1 pool + the rest on demand", 60*time.Second, func() (bool, string) {
		c, s := h.states(ids)
		return c["pool/RUNNING"] == 1 && c["ondemand/RUNNING"] == free-1, s
	})
	time.Sleep(3 * time.Second) // some on-demand seconds to bill
	if f := h.freeH100(); f != 0 {
		t.Fatalf("%d h100 became free meanwhile (other work ended): the pool is not full, no preemption to test", f)
	}

	// Reserved work of another tenant preempts one on-demand job.
	res := h.submit("bob", "b5b", 1)[0]
	var victim int64
	h.waitFor("bob's reserved job running and an on-demand job requeued", 60*time.Second, func() (bool, string) {
		_, s := h.states(append(slices.Clone(ids), res))
		if !h.job(res).HasState("RUNNING") {
			return false, s
		}
		for _, id := range ids {
			if j := h.job(id); j.Partition == "ondemand" && j.HasState("PENDING") {
				victim = id
				return true, s
			}
		}
		return false, s
	})
	t.Logf("reserved job %d preempted on-demand job %d: %s", res, victim, h.env.Exec(t, "", "scontrol", "-o", "show", "job", strconv.FormatInt(victim, 10)))
	if r := h.env.Exec(t, "", "scontrol", "-o", "show", "job", strconv.FormatInt(victim, 10)); !strings.Contains(r, "Restarts=1") {
		t.Errorf("preempted job %d was not requeued: %s", victim, r)
	}
	// A requeued job stays in the on-demand tier: the controller does
	// not move it again, and counts it against the cap.
	if rows := h.runOnce(tf); len(movedIDs(rows)) != 0 {
		t.Errorf("cycle after preemption moved %v", movedIDs(rows))
	}
	if j := h.job(victim); j.QOS != "ondemand" {
		t.Errorf("requeued job %d QOS %q", victim, j.QOS)
	}

	// Free bob's GPU: the requeued job runs a second time, on demand.
	h.env.Exec(t, "", "scancel", strconv.FormatInt(res, 10))
	h.waitFor("the requeued job running again", 150*time.Second, func() (bool, string) {
		j := h.job(victim)
		return j.HasState("RUNNING"), strings.Join(j.State, "+") + "/" + j.Reason
	})
	time.Sleep(3 * time.Second)
	h.cancelAll()

	all := append(slices.Clone(ids), res)
	h.checkBilling(all, start, victim)
}

// needH100 waits up to a minute for n h100 to be free (the jobs of the
// previous test end a few seconds after their cancel) and fails the test
// when they are not (other work on the shared testbed). It returns the
// number free, once stable for three samples.
func (h *b5) needH100(n int) int {
	h.t.Helper()
	var free, same int
	last := -1
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		free = h.freeH100()
		if free == last {
			same++
		} else {
			same, last = 0, free
		}
		if free >= n && same >= 2 {
			return free
		}
		time.Sleep(time.Second)
	}
	h.t.Fatalf("the test needs %d free h100 on the testbed, %d are free (other jobs running?)", n, free)
	return 0
}

// freeH100 is the number of h100 GPUs no job holds now.
func (h *b5) freeH100() int {
	h.t.Helper()
	nodes, err := h.cl.ListNodes(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	free := 0
	for _, n := range nodes {
		for _, g := range n.GPUs() {
			if g.Type == "h100" {
				free += int(g.Total - g.Used)
			}
		}
	}
	return free
}

// runRec is one run of a job as the check sees it.
type runRec struct {
	job        int64
	submit     int64
	partition  string
	qos        string
	start, end int64
	h100       int64
}

// checkBilling meters the runs of ids as slurmdbd recorded them (through
// slurmrestd) into a ledger, prices them with the test's rate card, and
// compares GPU-seconds and amounts per tier with an independent
// recomputation from sacct's records.
func (h *b5) checkBilling(ids []int64, start time.Time, requeued int64) {
	t := h.t
	t.Helper()
	want := map[int64]bool{}
	for _, id := range ids {
		want[id] = true
	}
	// slurmdbd gets the end of each run shortly after the cancel.
	var runs []runRec
	h.waitFor("slurmdbd records every run as ended", 60*time.Second, func() (bool, string) {
		runs = h.sacctRuns(start)
		var got []runRec
		for _, r := range runs {
			if want[r.job] {
				got = append(got, r)
			}
		}
		runs = got
		n := 0
		for _, r := range runs {
			if r.end == 0 && r.start != 0 {
				return false, fmt.Sprintf("run of %d not ended", r.job)
			}
			if r.job == requeued {
				n++
			}
		}
		return n >= 2, fmt.Sprintf("%d records of the requeued job %d", n, requeued)
	})
	t.Logf("sacct runs: %+v", runs)

	// Independent recomputation from sacct: tier by partition.
	indep := map[string]int64{}
	var total int64
	for _, r := range runs {
		if r.start == 0 || r.end <= r.start {
			continue
		}
		tier := "reserved"
		if r.partition == "ondemand" {
			tier = "ondemand"
		}
		s := r.h100 * (r.end - r.start)
		indep[tier] += s
		total += s
	}
	if indep["ondemand"] == 0 || indep["reserved"] == 0 {
		t.Fatalf("expected both tiers used: %v", indep)
	}
	var rq []runRec
	for _, r := range runs {
		if r.job == requeued && r.start != 0 {
			rq = append(rq, r)
		}
	}
	if len(rq) != 2 || rq[0].partition != "ondemand" || rq[1].partition != "ondemand" || rq[0].submit == rq[1].submit {
		t.Errorf("requeued job %d: runs %+v, want two on-demand runs with distinct submit times", requeued, rq)
	}

	// The ledger's path: slurm_acct_db -> ingest -> meter -> ledger -> pricing.
	// slurmdbd commits its writes to slurm_acct_db a little after sacct
	// (served by slurmdbd itself) shows them: ingest until every run is in.
	var lines []meter.Line
	nonzero := 0
	for _, r := range runs {
		if r.start != 0 && r.end > r.start && r.h100 > 0 {
			nonzero++
		}
	}
	h.waitFor("the ingest sees every run", 60*time.Second, func() (bool, string) {
		lines = h.ledgerLines(start, want)
		return len(lines) == nonzero, fmt.Sprintf("%d ledger lines, %d runs with GPU-seconds", len(lines), nonzero)
	})
	got := map[string]int64{}
	for _, l := range lines {
		got[string(l.Tier)] += l.GPUSeconds
	}
	if got["ondemand"] != indep["ondemand"] || got["reserved"] != indep["reserved"] {
		t.Errorf("GPU-seconds by tier: ledger %v, sacct %v", got, indep)
	}
	if got["ondemand"]+got["reserved"] != total {
		t.Errorf("reserved %d + ondemand %d != total %d", got["reserved"], got["ondemand"], total)
	}
	// Amounts: 6.00/h on demand, 2.00/h reserved, rounded once per tier.
	rate := map[string]int64{"ondemand": 600, "reserved": 200} // cents per GPU-hour
	for tier, secs := range indep {
		wantCents := (secs*rate[tier] + 1800) / 3600
		if gotCents := h.ledgerAmount(lines, tier); gotCents != wantCents {
			t.Errorf("%s amount: ledger %d cents, recomputed %d cents (%d GPU-seconds)", tier, gotCents, wantCents, secs)
		}
	}
	t.Logf("billed GPU-seconds: ondemand %d, reserved %d, total %d", got["ondemand"], got["reserved"], total)
}

// sacctRuns reads the runs of the b5 accounts since start with sacct -D
// (every run of a requeued job).
func (h *b5) sacctRuns(start time.Time) []runRec {
	out := h.env.Exec(h.t, "", "env", "SLURM_TIME_FORMAT=%s", "sacct", "-D", "-X", "-n", "-P", "--noconvert", "-a",
		"-A", "b5a,b5b", "-S", start.UTC().Format("2006-01-02T15:04:05"), "-o", "JobIDRaw,Submit,Partition,QOS,Start,End,AllocTRES")
	var runs []runRec
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 7 {
			continue
		}
		id, _ := strconv.ParseInt(f[0], 10, 64)
		num := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
		r := runRec{job: id, submit: num(f[1]), partition: f[2], qos: f[3], start: num(f[4]), end: num(f[5])}
		for _, kv := range strings.Split(f[6], ",") {
			if k, v, ok := strings.Cut(kv, "="); ok && k == "gres/gpu:h100" {
				r.h100 = num(v)
			}
		}
		runs = append(runs, r)
	}
	return runs
}

// ledgerLines runs gpubridge's ingest (slurm_acct_db through the read-only
// user, the production source) over the test's window into a ledger (the
// in-memory store, conformance-tested against the MariaDB one, so the shared
// ledger is left alone) and returns the lines of the wanted jobs.
func (h *b5) ledgerLines(start time.Time, want map[int64]bool) []meter.Line {
	t := h.t
	ctx := context.Background()
	if h.env.SlurmDBDSN == "" {
		t.Fatal("GPUBRIDGE_SLURMDB_DSN is unset: `source .testbed/env`")
	}
	sdb, err := sqlx.Open("mysql", h.env.SlurmDBDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	src, err := ingest.NewSlurmDB(sdb, h.env.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	l := ledger.NewMemory()
	in := &ingest.Ingester{Cluster: h.env.Cluster, Source: src, Ledger: l,
		Rules: meter.TierRules{OnDemandPartition: "ondemand", OnDemandQOS: "ondemand"}}
	res, err := in.Ingest(ctx, ingest.Window{From: start, To: time.Now().Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	_ = res
	var lines []meter.Line
	for p := meter.PeriodOf(start); p <= meter.PeriodOf(time.Now()); p++ {
		if err := l.Lines(ctx, h.env.Cluster, ledger.LineQuery{Booked: p}, func(x meter.Line) error {
			if want[int64(x.Run.JobID)] && (x.Account == "b5a" || x.Account == "b5b") {
				lines = append(lines, x)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return lines
}

// ledgerAmount prices a tier's lines with the test's rate card, in cents.
func (h *b5) ledgerAmount(lines []meter.Line, tier string) int64 {
	card, err := pricing.ParseYAML([]byte(b5RateCard))
	if err != nil {
		h.t.Fatal(err)
	}
	secs := map[string]int64{}
	for _, l := range lines {
		if string(l.Tier) == tier {
			secs[l.Type] += l.GPUSeconds
		}
	}
	var total int64
	for typ, s := range secs {
		q, err := card.Quote(typ, meter.Tier(tier), time.Now().Unix())
		if err != nil {
			h.t.Fatal(err)
		}
		a, err := card.Amount(q, s)
		if err != nil {
			h.t.Fatal(err)
		}
		total += a.Units()
	}
	return total
}

// killAfterMovesEnv, set in the environment of a helper process started
// from this test binary, makes TestMain run gpubridge's CLI on the process's
// arguments with a controller that SIGKILLs the process right after its Nth
// move was written and before it was recorded, as a crash would. The
// shipped binary has no such switch.
const killAfterMovesEnv = "GPUBRIDGE_TEST_KILL_AFTER_MOVES"

func TestMain(m *testing.M) {
	if v, ok := os.LookupEnv(killAfterMovesEnv); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "%s=%q: want a move count >= 1\n", killAfterMovesEnv, v)
			os.Exit(2)
		}
		afterMove = func(moved int) {
			if moved == n {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				time.Sleep(time.Minute)
			}
		}
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestBurstAcceptanceKilledMidCycle: the controller process is killed
// (SIGKILL) right after its first move was written to Slurm and before it
// was recorded. A restarted controller moves no job twice, loses none, and
// records the first move from the marker in the job's admin comment.
func TestBurstAcceptanceKilledMidCycle(t *testing.T) {
	h := newB5(t)
	h.tenant("b5a", "alice", 1)
	tf := h.tenants("  - {name: b5a, users: [alice], gpus: {h100: 1}, burst: {enabled: true, maxOnDemandGPUs: 3}}\n")
	start := time.Now().Add(-time.Second)
	ids := h.submit("alice", "b5a", 4)
	h.waitHeld(ids, 1)

	// The controller process is this test binary as gpubridge (TestMain),
	// killed right after its first move.
	cmd := exec.Command(os.Args[0], "burst", "run-once", "--tenants", tf)
	cmd.Env = append(os.Environ(), killAfterMovesEnv+"=1")
	out, err := cmd.CombinedOutput()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("run-once was not killed: %v\n%s", err, out)
	}
	markers := func() map[int64]burst.Marker {
		m := map[int64]burst.Marker{}
		for _, id := range ids {
			j := h.job(id)
			if n := strings.Count(j.AdminComment, burst.MarkerPrefix); n > 1 {
				t.Errorf("job %d carries %d markers: %q", id, n, j.AdminComment)
			}
			if mk, ok := burst.ParseMarker(j.AdminComment); ok {
				if j.Partition != "ondemand" || j.QOS != "ondemand" {
					t.Errorf("job %d has a marker but is in %s/%s", id, j.Partition, j.QOS)
				}
				m[id] = mk
			}
		}
		return m
	}
	first := markers()
	if len(first) != 1 {
		t.Fatalf("after the kill: %d jobs moved, want 1", len(first))
	}
	db, err := sqldb.OpenMigrated(context.Background(), h.env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := store.New(db, h.env.Cluster)
	recorded := func() map[int64]time.Time {
		ms, err := st.Moves(context.Background(), "b5a", start.Truncate(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		out := map[int64]time.Time{}
		for _, m := range ms {
			if slices.Contains(ids, m.JobID) {
				if _, dup := out[m.JobID]; dup {
					t.Errorf("job %d recorded twice", m.JobID)
				}
				out[m.JobID] = m.MovedAt
			}
		}
		return out
	}
	if r := recorded(); len(r) != 0 {
		t.Fatalf("moves recorded before the kill returned: %v", r)
	}

	// Restart: the other two move, the first is not moved again.
	rows := h.runOnce(tf)
	var firstID int64
	for id := range first {
		firstID = id
	}
	if got := movedIDs(rows); len(got) != 2 || slices.Contains(got, firstID) {
		t.Fatalf("restarted cycle moved %v; want the two jobs other than %d", got, firstID)
	}
	after := markers()
	if len(after) != 3 || !after[firstID].Moved.Equal(first[firstID].Moved) {
		t.Errorf("markers after restart: %v (first: %v)", after, first)
	}
	r := recorded()
	if len(r) != 3 || !r[firstID].Equal(first[firstID].Moved) {
		t.Errorf("recorded moves: %v, want 3 with job %d at its marker time %s", r, firstID, first[firstID].Moved)
	}
	if rows := h.runOnce(tf); len(movedIDs(rows)) != 0 {
		t.Errorf("third cycle moved %v", movedIDs(rows))
	}
}

// TestSubmitTimeRoute checks the submit-time alternative on the testbed:
// contrib/job_submit_burst.lua's decision (run with the host's lua) routes a
// job of a listed account to "pool,<on-demand>", and Slurm then starts the
// overflow in the on-demand partition when that partition carries a
// partition QOS, while the tenant quota holds it in the pool. It also shows
// the trade-off: the routed jobs count against the tenant QOS, so a
// pool-only job of the tenant waits. The testbed's own job_submit.lua is not
// replaced: the test uses a runtime partition b5od (scontrol create),
// removed at the end, in place of the rendered ondemand partition.
func TestSubmitTimeRoute(t *testing.T) {
	h := newB5(t)
	h.tenant("b5a", "alice", 1)
	lua, err := exec.LookPath("lua5.1")
	if err != nil {
		if lua, err = exec.LookPath("lua"); err != nil {
			t.Fatal("lua5.1 is needed to run contrib/job_submit_burst.lua (apt-get install lua5.1)")
		}
	}
	conf := filepath.Join(h.dir, "burst_submit.conf")
	if err := os.WriteFile(conf, []byte("pool=pool\nondemand=b5od\naccount=b5a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `dofile("../../contrib/job_submit_burst.lua")
gpubridge_burst.conf_path = arg[1]
slurm = {SUCCESS = 0}
local j = {account = "b5a"}
gpubridge_burst_route(j, {}, 2001)
local k = {account = "b5a", comment = "gpubridge:noburst"}
gpubridge_burst_route(k, {}, 2001)
print(j.partition, tostring(k.partition))`
	sf := filepath.Join(h.dir, "route.lua")
	if err := os.WriteFile(sf, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(lua, sf, conf).CombinedOutput()
	if err != nil {
		t.Fatalf("lua: %v: %s", err, out)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 || f[0] != "pool,b5od" || f[1] != "nil" {
		t.Fatalf("lua routing = %q, want pool,b5od and nil (opted out)", out)
	}
	parts := f[0]

	ctx := context.Background()
	_, _ = h.env.Run(ctx, "", nil, "sacctmgr", "-i", "add", "qos", "b5odq")
	h.env.Exec(t, "", "sacctmgr", "-i", "modify", "qos", "where", "name=b5odq", "set", "GrpTRES=gres/gpu:h100=4")
	_, _ = h.env.Run(ctx, "", nil, "scontrol", "delete", "PartitionName=b5od")
	h.env.Exec(t, "", "scontrol", "create", "PartitionName=b5od", "Nodes=gpu-a,gpu-b", "PriorityTier=1", "PreemptMode=REQUEUE", "QOS=b5odq", "State=UP")
	defer func() {
		h.cancelAll()
		time.Sleep(2 * time.Second)
		_, _ = h.env.Run(ctx, "", nil, "scontrol", "delete", "PartitionName=b5od")
	}()
	h.needH100(3)
	ids := h.submit("alice", "b5a", 3, "-p", parts)
	h.waitFor("one job in the pool, two on demand (b5od)", 60*time.Second, func() (bool, string) {
		c, s := h.states(ids)
		return c["pool/RUNNING"] == 1 && c["b5od/RUNNING"] == 2, s
	})
	for _, id := range ids {
		if j := h.job(id); j.QOS != "b5a" {
			t.Errorf("job %d QOS %q: the route keeps the tenant QOS", id, j.QOS)
		}
	}
	// Trade-off: the on-demand jobs count against the tenant QOS.
	qos := h.env.Exec(t, "", "scontrol", "show", "assoc_mgr", "qos=b5a", "flags=qos")
	if !strings.Contains(qos, "gres/gpu:h100=1(3)") {
		t.Errorf("tenant QOS usage: want gres/gpu:h100=1(3) (1 pool + 2 on demand):\n%s", qos)
	}
	var pool int64
	for _, id := range ids {
		if h.job(id).Partition == "pool" {
			pool = id
		}
	}
	h.env.Exec(t, "", "scancel", strconv.FormatInt(pool, 10))
	next := h.submit("alice", "b5a", 1)[0]
	h.waitFor("a pool-only job of the tenant held although its reserved GPU is free", 30*time.Second, func() (bool, string) {
		j := h.job(next)
		return j.HasState("PENDING") && j.Reason == "QOSGrpGRES", strings.Join(j.State, "+") + "/" + j.Reason
	})
}
