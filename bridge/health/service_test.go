package health_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/check"
	"github.com/gpubridge/gpubridge/bridge/health/healthtest"
	"github.com/gpubridge/gpubridge/bridge/health/store"
)

// env is one test's service over the fake cluster, with a clock the test
// moves.
type env struct {
	t     *testing.T
	c     *healthtest.Cluster
	st    *store.Memory
	svc   *health.Service
	mu    sync.Mutex
	now   time.Time
	fault map[string]bool // node -> the probe check fails
	warn  map[string]bool
}

const interval = 10 * time.Minute

func newEnv(t *testing.T, mutate func(*health.Params), nodes ...string) *env {
	t.Helper()
	if len(nodes) == 0 {
		nodes = []string{"gpu-a"}
	}
	e := &env{t: t, c: healthtest.New(append(nodes, "other")...), st: store.NewMemory(),
		now: time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC), fault: map[string]bool{}, warn: map[string]bool{}}
	e.c.Now = e.clock
	e.c.Check = func(node, c string) (string, int) {
		e.mu.Lock()
		defer e.mu.Unlock()
		switch {
		case c == "probe" && e.fault[node]:
			return "temp_c=95\nreason=sensor hot\n", 1
		case c == "probe" && e.warn[node]:
			return "temp_c=70\nverdict=warn\nreason=fan 2 slow\n", 0
		case c == "probe":
			return "temp_c=41\n", 0
		case c == "fatal-probe" && e.fault[node]:
			return "", 1
		}
		return "ok=1\n", 0
	}
	cat, err := check.NewCatalog([]check.Def{
		{Name: "probe", Command: "probe", Timeout: time.Minute, Thresholds: check.Thresholds{check.AnyModel: {"temp_c": {Max: f(90)}}}},
		{Name: "burnin", Command: "burnin", Timeout: time.Minute},
		{Name: "fatal-probe", Command: "fp", Timeout: time.Minute, Fatal: ptr(true)},
		{Name: "long", Command: "long", Timeout: time.Hour, Exclusive: ptr(true)},
	}, "health.checks")
	if err != nil {
		t.Fatal(err)
	}
	p := health.Params{
		Nodes: e.c, Jobs: e.c, Outputs: e.c, Store: e.st, Usage: e.c, Catalog: cat, Now: e.clock,
		Sleep: func(context.Context, time.Duration) error { e.advance(2 * time.Second); return nil },
		Settings: health.Settings{
			Nodes: nodes, Account: "hsvc", User: "root", MaxConcurrent: 4,
			Policy:     health.Policy{AcceptancePasses: 1, RequalifyPasses: 3},
			Acceptance: health.Schedule{Name: "acceptance", Spec: "@every 5m", Checks: []string{"burnin"}},
			Schedules: []health.Schedule{
				{Name: "quick", Spec: "@every 10m", Checks: []string{"probe"}},
				{Name: "weekly", Spec: "0 4 * * 0", Checks: []string{"long"}, WhenIdle: true},
			},
			TenantChecksPerHour: 2,
			Retention:           30 * 24 * time.Hour,
		},
	}
	if mutate != nil {
		mutate(&p)
	}
	svc, err := health.New(p)
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	return e
}

func f(v float64) *float64 { return &v }
func ptr[T any](v T) *T    { return &v }

func (e *env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = e.now.Add(d)
}

func (e *env) setFault(node string, on bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fault[node] = on
}

func (e *env) cycle(schedule string) health.Report {
	e.t.Helper()
	rep, err := e.svc.Cycle(context.Background(), schedule)
	if err != nil {
		e.t.Fatalf("cycle %s: %v", schedule, err)
	}
	return rep
}

func (e *env) rec(node string) health.Node {
	e.t.Helper()
	recs, err := e.st.Nodes(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return recs[node]
}

// serving stores node as known and in service (skipping its burn-in).
func (e *env) serving(node string) {
	e.t.Helper()
	if _, err := e.st.PutNode(context.Background(), health.Node{Name: node, State: health.Serving, Since: e.clock()}, nil); err != nil {
		e.t.Fatal(err)
	}
}

// TestNewNodeGetsNoTenantJobBeforeAcceptance: a node new to gpubridge is
// fenced and drained at the first cycle; a tenant's job pinned to it
// waits through the acceptance run, and starts once the acceptance set
// has passed.
func TestNewNodeGetsNoTenantJobBeforeAcceptance(t *testing.T) {
	e := newEnv(t, nil)
	tenantJob := e.c.SubmitTenant("acme", "gpu-a")
	rep := e.cycle("acceptance")
	if r := e.rec("gpu-a"); r.State != health.BurnIn {
		t.Fatalf("state %s, want burn-in", r.State)
	}
	if len(rep.Submitted) != 1 || !rep.Submitted[0].Held || rep.Submitted[0].Purpose != health.PurposeAcceptance {
		t.Fatalf("submitted %+v", rep.Submitted)
	}
	calls := e.c.Calls()
	want := []string{
		"fence gpu-a",
		"drain gpu-a: gpubridge: burn-in (0/1 passed): acceptance checks pending",
		"submit 102 on gpu-a: burnin",
		"resume gpu-a",
		"drain gpu-a: gpubridge: burn-in (0/1 passed): acceptance checks pending",
	}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("calls (-want +got)\n%s", diff)
	}
	if got := e.c.JobState(tenantJob); got != "PENDING" {
		t.Fatalf("tenant job %s while the node burns in", got)
	}
	if j := e.c.Jobs()[0]; j.Req.Reservation != health.FenceName("gpu-a") || j.Req.Account != "hsvc" || j.Req.User != "root" {
		t.Errorf("acceptance job request %+v", j.Req)
	}
	e.advance(5 * time.Minute)
	rep = e.cycle("acceptance")
	if r := e.rec("gpu-a"); r.State != health.Serving {
		t.Fatalf("state %s after a passing acceptance run, want serving", r.State)
	}
	if diff := cmp.Diff([]string{"unfence gpu-a", "resume gpu-a"}, e.c.Calls()); diff != "" {
		t.Errorf("calls (-want +got)\n%s", diff)
	}
	e.c.States(context.Background(), nil) // a scheduler tick
	if got := e.c.JobState(tenantJob); got != "RUNNING" {
		t.Errorf("tenant job %s after acceptance, want RUNNING", got)
	}
	if len(rep.Submitted) != 0 {
		t.Errorf("acceptance cycle submitted %+v on a serving node", rep.Submitted)
	}
}

// TestFailingCheckDrainsWithinTwoIntervals: the fault appears right after
// a passing run; the next scheduled run fails and the node is drained by
// the cycle after it, two intervals after the fault at most. No tenant
// job starts while it is held; with the fault cleared it serves again
// only after RequalifyPasses (3) passing acceptance runs.
func TestFailingCheckDrainsWithinTwoIntervals(t *testing.T) {
	e := newEnv(t, nil)
	e.serving("gpu-a")
	e.cycle("quick")                      // submits a passing run
	e.c.States(context.Background(), nil) // which runs before the fault
	e.advance(interval)
	faultAt := e.clock()
	e.setFault("gpu-a", true)
	e.cycle("quick") // harvests the pass, submits the run that will fail
	if r := e.rec("gpu-a"); r.State != health.Serving {
		t.Fatalf("state %s before the failing run is harvested", r.State)
	}
	e.advance(interval)
	rep := e.cycle("quick")
	drainedAt := e.clock()
	if drainedAt.Sub(faultAt) > 2*interval {
		t.Fatalf("drained %s after the fault, more than 2 intervals", drainedAt.Sub(faultAt))
	}
	r := e.rec("gpu-a")
	if r.State != health.Drained || r.Needed != 3 || !slices.Equal(r.Checks, []string{"probe"}) {
		t.Fatalf("record %+v", r)
	}
	n := e.c.Node("gpu-a")
	wantReason := "gpubridge: probe failed: sensor hot (exit 1); temp_c=95 > 90 (h100)"
	if !n.Drain || n.Reason != wantReason || !e.c.Fenced("gpu-a") {
		t.Fatalf("slurm node %+v fenced=%v, want drained with %q", n, e.c.Fenced("gpu-a"), wantReason)
	}
	if len(rep.Events) != 1 || rep.Events[0].From != health.Serving || rep.Events[0].To != health.Drained || rep.Events[0].RunID == 0 {
		t.Errorf("events %+v", rep.Events)
	}
	tenantJob := e.c.SubmitTenant("acme", "gpu-a")

	// Still broken: acceptance runs fail, the node stays drained.
	for i := 0; i < 2; i++ {
		e.advance(5 * time.Minute)
		e.cycle("acceptance")
		e.cycle("quick")
		if r := e.rec("gpu-a"); r.State != health.Drained || r.Passes != 0 {
			t.Fatalf("round %d: %+v", i, r)
		}
	}
	// Repaired: passes 1, 2 keep it drained; the 3rd resumes it.
	e.setFault("gpu-a", false)
	var passes []int
	for i := 0; i < 4 && e.rec("gpu-a").State != health.Serving; i++ {
		e.advance(5 * time.Minute)
		e.cycle("acceptance")
		passes = append(passes, e.rec("gpu-a").Passes)
		if e.rec("gpu-a").State != health.Serving {
			if n := e.c.Node("gpu-a"); !n.Drain || (e.rec("gpu-a").Passes > 0 && !strings.Contains(n.Reason, "requalifying (")) {
				t.Fatalf("after %d passes: slurm node %+v", e.rec("gpu-a").Passes, n)
			}
			if got := e.c.JobState(tenantJob); got != "PENDING" {
				t.Fatalf("tenant job %s while requalifying", got)
			}
		}
	}
	// The first cycle harvests the last failing run; then 1, 2, 3 passes.
	if diff := cmp.Diff([]int{0, 1, 2, 0}, passes); diff != "" {
		t.Errorf("passes per cycle (-want +got)\n%s", diff)
	}
	if r := e.rec("gpu-a"); r.State != health.Serving {
		t.Fatalf("state %s, want serving after 3 passes", r.State)
	}
	if n := e.c.Node("gpu-a"); n.Unavailable() || e.c.Fenced("gpu-a") {
		t.Fatalf("slurm node %+v fenced=%v after requalifying", n, e.c.Fenced("gpu-a"))
	}
	e.c.States(context.Background(), nil)
	if got := e.c.JobState(tenantJob); got != "RUNNING" {
		t.Errorf("tenant job %s after resume", got)
	}
}

// TestPersonDrainedNodeStaysDrained: a node drained with another reason is
// never checked, drained or resumed by gpubridge, in any cycle, faulty or
// not; once the person resumes it, it requalifies behind its reservation.
func TestPersonDrainedNodeStaysDrained(t *testing.T) {
	e := newEnv(t, nil)
	e.serving("gpu-a")
	e.c.PersonDrains("gpu-a", "ops: PSU swap")
	for i, fault := range []bool{false, true, false} {
		e.setFault("gpu-a", fault)
		for _, s := range []string{"quick", "acceptance", "weekly"} {
			e.advance(interval)
			e.cycle(s)
		}
		n := e.c.Node("gpu-a")
		if !n.Drain || n.Reason != "ops: PSU swap" {
			t.Fatalf("round %d: slurm node %+v", i, n)
		}
		if r := e.rec("gpu-a"); r.State != health.External {
			t.Fatalf("round %d: state %s", i, r.State)
		}
	}
	if jobs := e.c.Jobs(); len(jobs) != 0 {
		t.Fatalf("check jobs on a node drained by a person: %+v", jobs)
	}
	if calls := e.c.Calls(); len(calls) != 0 {
		t.Fatalf("gpubridge touched the node: %v", calls)
	}
	if _, err := e.svc.ResumeNode(context.Background(), "gpu-a", "alice", ""); !errors.Is(err, health.ErrNotAllowed) {
		t.Errorf("resume node of a person's drain: %v, want ErrNotAllowed", err)
	}
	e.c.PersonResumes("gpu-a")
	e.cycle("acceptance")
	r := e.rec("gpu-a")
	if r.State != health.Requalify || r.Needed != 3 || !e.c.Fenced("gpu-a") {
		t.Fatalf("back from the outside drain: %+v fenced=%v", r, e.c.Fenced("gpu-a"))
	}
}

// TestPersonTakesOverGpubridgeDrain: a person who re-drains a node
// gpubridge holds, with their own reason, keeps it: passing checks do not
// resume it.
func TestPersonTakesOverGpubridgeDrain(t *testing.T) {
	e := newEnv(t, nil)
	e.serving("gpu-a")
	e.setFault("gpu-a", true)
	e.cycle("quick")
	e.advance(interval)
	e.cycle("quick")
	if r := e.rec("gpu-a"); r.State != health.Drained {
		t.Fatalf("state %s", r.State)
	}
	e.c.PersonDrains("gpu-a", "vendor RMA 4711")
	e.setFault("gpu-a", false)
	for i := 0; i < 5; i++ {
		e.advance(5 * time.Minute)
		e.cycle("acceptance")
	}
	if n := e.c.Node("gpu-a"); !n.Drain || n.Reason != "vendor RMA 4711" {
		t.Fatalf("slurm node %+v", n)
	}
	if r := e.rec("gpu-a"); r.State != health.External {
		t.Fatalf("state %s, want external", r.State)
	}
}

func TestFatalCheckStopsTheNode(t *testing.T) {
	e := newEnv(t, func(p *health.Params) {
		p.Settings.Schedules[0].Checks = []string{"fatal-probe"}
	})
	e.serving("gpu-a")
	job := e.c.SubmitTenant("acme", "gpu-a")
	e.c.States(context.Background(), nil)
	e.setFault("gpu-a", true)
	e.cycle("quick")
	e.advance(interval)
	rep := e.cycle("quick")
	if got := e.c.JobState(job); got != "NODE_FAIL" {
		t.Fatalf("tenant job %s after a fatal failure, want NODE_FAIL", got)
	}
	if len(rep.Events) != 1 || !rep.Events[0].Fatal {
		t.Fatalf("events %+v", rep.Events)
	}
	if r := e.rec("gpu-a"); !r.Fatal || r.State != health.Drained {
		t.Fatalf("record %+v", r)
	}
	calls := strings.Join(e.c.Calls(), "\n")
	if !strings.Contains(calls, "down gpu-a: gpubridge: fatal-probe failed: exit 1") {
		t.Errorf("calls:\n%s", calls)
	}
}

func TestSuspectAfterWarnServesAgainWhenItPasses(t *testing.T) {
	e := newEnv(t, func(p *health.Params) {
		p.Settings.Schedules = append(p.Settings.Schedules, health.Schedule{Name: "other", Spec: "@every 1h", Checks: []string{"burnin"}})
	})
	e.serving("gpu-a")
	e.mu.Lock()
	e.warn["gpu-a"] = true
	e.mu.Unlock()
	e.cycle("quick")
	e.advance(interval)
	e.cycle("other") // harvests the warn; its run includes the warned check
	r := e.rec("gpu-a")
	if r.State != health.Suspect || r.Reason != "probe warned: fan 2 slow" {
		t.Fatalf("record %+v", r)
	}
	if n := e.c.Node("gpu-a"); n.Unavailable() {
		t.Fatalf("a suspect node was drained: %+v", n)
	}
	jobs := e.c.Jobs()
	if got := jobs[len(jobs)-1].Checks(); !slices.Equal(got, []string{"burnin", "probe"}) {
		t.Errorf("the suspect's next run checks %v, want burnin and probe", got)
	}
	e.mu.Lock()
	e.warn["gpu-a"] = false
	e.mu.Unlock()
	e.advance(interval)
	e.cycle("quick")
	if r := e.rec("gpu-a"); r.State != health.Serving {
		t.Fatalf("state %s after the warned check passed", r.State)
	}
}

func TestTenantTrigger(t *testing.T) {
	e := newEnv(t, nil, "gpu-a", "gpu-b")
	e.serving("gpu-a")
	e.serving("gpu-b")
	e.c.SubmitTenant("acme", "gpu-a")
	e.c.States(context.Background(), nil)
	ctx := context.Background()
	_, err := e.svc.Trigger(ctx, health.Request{Node: "gpu-b", Tenant: "acme", Actor: "alice", Checks: []string{"probe"}})
	if !errors.Is(err, health.ErrNotAllowed) || !strings.Contains(err.Error(), "tenant acme has no job running on gpu-b") {
		t.Fatalf("check on a node acme does not use: %v", err)
	}
	if _, err := e.svc.Trigger(ctx, health.Request{Node: "other", Tenant: "acme"}); !errors.Is(err, health.ErrUnknownNode) {
		t.Fatalf("check on an unmanaged node: %v", err)
	}
	r, err := e.svc.Trigger(ctx, health.Request{Node: "gpu-a", Tenant: "acme", Actor: "alice", Checks: []string{"probe"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Purpose != health.PurposeTenant || r.Tenant != "acme" || r.Held {
		t.Errorf("run %+v", r)
	}
	if j := e.c.Jobs()[0]; j.Req.Account != "hsvc" || j.Req.Reservation != "" || !slices.Equal(j.Req.Nodes, []string{"gpu-a"}) {
		t.Errorf("job request %+v: want the health account, no reservation, gpu-a", j.Req)
	}
	if _, err := e.svc.Trigger(ctx, health.Request{Node: "gpu-a", Tenant: "acme", Checks: []string{"probe"}}); !errors.Is(err, health.ErrBusy) {
		t.Fatalf("second check while the first is in flight: %v", err)
	}
	run, res, err := e.svc.Wait(ctx, r.ID)
	if err != nil || run.State != health.RunDone || len(res) != 1 || res[0].Verdict != check.Pass || res[0].Tenant != "acme" {
		t.Fatalf("Wait = %+v %+v %v", run, res, err)
	}
	if got, _ := e.svc.Results(ctx, health.ResultFilter{Tenant: "beta"}); len(got) != 0 {
		t.Errorf("another tenant sees acme's results: %+v", got)
	}
	if _, err := e.svc.Trigger(ctx, health.Request{Node: "gpu-a", Tenant: "acme", Checks: []string{"probe"}}); err != nil {
		t.Fatalf("second check: %v", err)
	}
	e.svc.Wait(ctx, r.ID+1)
	_, err = e.svc.Trigger(ctx, health.Request{Node: "gpu-a", Tenant: "acme", Checks: []string{"probe"}})
	if !errors.Is(err, health.ErrRateLimited) {
		t.Fatalf("third check in an hour: %v, want ErrRateLimited", err)
	}
	e.advance(61 * time.Minute)
	if _, err := e.svc.Trigger(ctx, health.Request{Node: "gpu-a", Tenant: "acme", Checks: []string{"probe"}}); err != nil {
		t.Fatalf("a check an hour later: %v", err)
	}
}

func TestTenantTriggerRefusedOnHeldNodeAdminRunsAcceptance(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	e.cycle("quick") // gpu-a is new: burn-in, no run (the quick schedule does not run on held nodes)
	e.c.SubmitTenant("acme", "gpu-a")
	if _, err := e.svc.Trigger(ctx, health.Request{Node: "gpu-a", Tenant: "acme"}); !errors.Is(err, health.ErrNotAllowed) {
		t.Fatalf("tenant check on a held node: %v", err)
	}
	r, err := e.svc.Trigger(ctx, health.Request{Node: "gpu-a", Actor: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Held || r.Purpose != health.PurposeAdmin || !slices.Equal(r.Checks, []string{"burnin"}) {
		t.Fatalf("admin run on a held node %+v", r)
	}
	if n := e.c.Node("gpu-a"); !n.Drain {
		t.Fatalf("node not drained again after the admin's run started: %+v", n)
	}
	if _, _, err := e.svc.Wait(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if rec := e.rec("gpu-a"); rec.State != health.Serving {
		t.Fatalf("state %s after the admin's passing acceptance run", rec.State)
	}
}

func TestResumeNodeOverride(t *testing.T) {
	e := newEnv(t, nil)
	e.serving("gpu-a")
	e.setFault("gpu-a", true)
	e.cycle("quick")
	e.advance(interval)
	e.cycle("quick")
	n, err := e.svc.ResumeNode(context.Background(), "gpu-a", "alice", "replaced the sensor")
	if err != nil {
		t.Fatal(err)
	}
	if n.State != health.Serving || n.Reason != "resumed by alice: replaced the sensor" {
		t.Fatalf("record %+v", n)
	}
	if sn := e.c.Node("gpu-a"); sn.Unavailable() || e.c.Fenced("gpu-a") {
		t.Fatalf("slurm node %+v fenced=%v", sn, e.c.Fenced("gpu-a"))
	}
	audits := e.st.Audits()
	if len(audits) != 1 || audits[0].Actor != "alice" || audits[0].Action != "resume" {
		t.Fatalf("audits %+v", audits)
	}
	if _, err := e.svc.ResumeNode(context.Background(), "gpu-a", "alice", ""); !errors.Is(err, health.ErrInvalid) {
		t.Errorf("resume of a serving node: %v", err)
	}
}

func TestCapAndIdle(t *testing.T) {
	e := newEnv(t, func(p *health.Params) { p.Settings.MaxConcurrent = 2 }, "gpu-a", "gpu-b", "gpu-c")
	for _, n := range []string{"gpu-a", "gpu-b", "gpu-c"} {
		e.serving(n)
	}
	rep := e.cycle("quick")
	if len(rep.Submitted) != 2 || !strings.Contains(rep.Skipped["gpu-c"], "2 check jobs are in flight") {
		t.Fatalf("submitted %d, skipped %v", len(rep.Submitted), rep.Skipped)
	}
	e.advance(interval)
	e.c.SubmitTenant("acme", "gpu-a")
	e.c.States(context.Background(), nil) // the tenant's job starts, the checks end
	rep = e.cycle("weekly")
	if rep.Skipped["gpu-a"] != "not idle" {
		t.Errorf("weekly on a busy node: skipped %v", rep.Skipped)
	}
	if len(rep.Submitted) != 2 {
		t.Fatalf("weekly submitted %+v", rep.Submitted)
	}
	for _, j := range e.c.Jobs()[2:] {
		if j.Req.GPUs != "gres/gpu:h100:4" || j.Req.Partition != "pool" {
			t.Errorf("exclusive check job on %s asks GPUs %q in %q, want every GPU of the node", j.Node, j.Req.GPUs, j.Req.Partition)
		}
	}
}

func TestCutOutputFailsCancelledJobDoesNot(t *testing.T) {
	e := newEnv(t, nil, "gpu-a", "gpu-b")
	e.serving("gpu-a")
	e.serving("gpu-b")
	rep := e.cycle("quick")
	var keyA string
	var jobB int64
	for _, r := range rep.Submitted {
		if r.Node == "gpu-a" {
			keyA = r.Key
		} else {
			jobB = r.JobID
		}
	}
	_ = e.c.Cancel(context.Background(), jobB) // someone cancels gpu-b's check job
	e.c.States(context.Background(), nil)      // gpu-a's ends
	out, _ := e.c.Read(context.Background(), keyA, 1<<20)
	e.c.SetOutput(keyA, out[:len(out)-20]) // the end marker is cut
	e.advance(interval)
	e.cycle("quick")
	if r := e.rec("gpu-a"); r.State != health.Drained || !strings.Contains(r.Reason, "output ends before the check finished") {
		t.Errorf("cut output: %+v", r)
	}
	if r := e.rec("gpu-b"); r.State != health.Serving {
		t.Errorf("a cancelled check job moved the node: %+v", r)
	}
}

func TestPendingTooLongIsCancelled(t *testing.T) {
	e := newEnv(t, func(p *health.Params) { p.Settings.MaxPending = 30 * time.Minute })
	e.serving("gpu-a")
	e.c.PersonDrains("other", "x")
	rep := e.cycle("quick")
	// The node goes down outside gpubridge: the job cannot start.
	e.c.PersonDrains("gpu-a", "ops")
	e.advance(31 * time.Minute)
	rep = e.cycle("quick")
	if len(rep.Finished) != 1 || rep.Finished[0].State != health.RunAborted || !strings.Contains(rep.Finished[0].Note, "did not start within 30m") {
		t.Fatalf("finished %+v", rep.Finished)
	}
	if !slices.ContainsFunc(e.c.Calls(), func(s string) bool { return strings.HasPrefix(s, "cancel ") }) {
		t.Error("the pending job was not cancelled")
	}
}

func TestSubmitFailureAbortsTheRun(t *testing.T) {
	e := newEnv(t, nil)
	e.serving("gpu-a")
	e.c.FailSubmit = errors.New("slurmrestd down")
	if _, err := e.svc.Cycle(context.Background(), "quick"); err == nil || !strings.Contains(err.Error(), "slurmrestd down") {
		t.Fatalf("cycle err = %v", err)
	}
	if fl, _ := e.st.InFlight(context.Background()); len(fl) != 0 {
		t.Fatalf("a run stays in flight after a failed submit: %+v", fl)
	}
	e.c.FailSubmit = nil
	if rep := e.cycle("quick"); len(rep.Submitted) != 1 {
		t.Fatalf("next cycle did not submit: %+v", rep)
	}
}

// TestCyclesConverge: once Slurm matches the records, cycles with nothing
// due change nothing in Slurm (level-triggered).
func TestCyclesConverge(t *testing.T) {
	e := newEnv(t, nil)
	e.serving("gpu-a")
	e.setFault("gpu-a", true)
	e.cycle("quick")
	e.advance(interval)
	e.cycle("quick")
	e.c.Calls()
	for i := 0; i < 3; i++ {
		if _, err := e.svc.Harvest(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if calls := e.c.Calls(); len(calls) != 0 {
		t.Errorf("harvests with nothing to do changed Slurm: %v", calls)
	}
}

func TestServiceValidates(t *testing.T) {
	cat := check.Catalog(check.Builtins())
	c := healthtest.New("gpu-a")
	base := health.Params{Nodes: c, Jobs: c, Outputs: c, Store: store.NewMemory(), Catalog: cat,
		Settings: health.Settings{Account: "a", User: "root", Acceptance: health.Schedule{Checks: []string{"xid"}}}}
	if _, err := health.New(base); err != nil {
		t.Fatalf("valid params: %v", err)
	}
	cases := map[string]func(*health.Params){
		"no account": func(p *health.Params) { p.Settings.Account = "" },
		"unknown check": func(p *health.Params) {
			p.Settings.Schedules = []health.Schedule{{Name: "q", Checks: []string{"nope"}}}
		},
		"empty acceptance": func(p *health.Params) { p.Settings.Acceptance.Checks = nil },
		"two-node schedule": func(p *health.Params) {
			p.Settings.Schedules = []health.Schedule{{Name: "q", Checks: []string{"nccl-2node"}}}
		},
		"duplicate schedules": func(p *health.Params) {
			p.Settings.Schedules = []health.Schedule{{Name: "acceptance", Checks: []string{"xid"}}}
		},
	}
	for name, mut := range cases {
		p := base
		p.Settings.Schedules = nil
		mut(&p)
		if _, err := health.New(p); !errors.Is(err, health.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	svc, _ := health.New(base)
	if _, err := svc.Cycle(context.Background(), "nope"); err == nil {
		t.Error("a cycle of an unknown schedule ran")
	}
	var names []string
	for _, j := range svc.Scheduled() {
		names = append(names, fmt.Sprintf("%s %s", j.Job.Name(), j.Spec))
	}
	if diff := cmp.Diff([]string{"health-acceptance "}, names); diff != "" {
		t.Errorf("Scheduled (-want +got)\n%s", diff)
	}
}

// TestMissingOutputIsNoVerdict: a check job that ended without an output
// file gpubridge can read (an output directory not shared with gpubridge)
// gives no verdict and an error, and drains nothing.
func TestMissingOutputIsNoVerdict(t *testing.T) {
	e := newEnv(t, nil)
	e.serving("gpu-a")
	rep := e.cycle("quick")
	e.c.States(context.Background(), nil)
	_ = e.c.Remove(context.Background(), rep.Submitted[0].Key)
	e.advance(interval)
	_, err := e.svc.Cycle(context.Background(), "quick")
	if err == nil || !strings.Contains(err.Error(), "no output file /fake/") {
		t.Fatalf("cycle err = %v", err)
	}
	run, _ := e.st.Run(context.Background(), rep.Submitted[0].ID)
	if run.State != health.RunAborted || !strings.Contains(run.Note, "is health.outputDir shared with gpubridge?") {
		t.Errorf("run %+v", run)
	}
	if r := e.rec("gpu-a"); r.State != health.Serving {
		t.Errorf("state %s after a run without output", r.State)
	}
}

// refusedOutputs is the cluster with every output file refused (a symbolic
// link, a FIFO ... put in place of it).
type refusedOutputs struct{ *healthtest.Cluster }

func (refusedOutputs) Read(context.Context, string, int64) ([]byte, error) {
	return nil, fmt.Errorf("%w: /fake/x.out is a symbolic link", health.ErrBadOutput)
}

// TestRefusedOutputIsNoVerdict: an output file the adapter refuses ends
// the run without a verdict, reported, and the node keeps serving (it is
// neither drained on it nor retried every cycle).
func TestRefusedOutputIsNoVerdict(t *testing.T) {
	e := newEnv(t, func(p *health.Params) { p.Outputs = refusedOutputs{p.Outputs.(*healthtest.Cluster)} })
	e.serving("gpu-a")
	rep := e.cycle("quick")
	e.c.States(context.Background(), nil)
	e.advance(interval)
	_, err := e.svc.Cycle(context.Background(), "quick")
	if err == nil || !strings.Contains(err.Error(), "output file refused") {
		t.Fatalf("cycle err = %v", err)
	}
	run, _ := e.st.Run(context.Background(), rep.Submitted[0].ID)
	if run.State != health.RunAborted || !strings.Contains(run.Note, "symbolic link") {
		t.Errorf("run %+v", run)
	}
	if r := e.rec("gpu-a"); r.State != health.Serving {
		t.Errorf("state %s after a refused output", r.State)
	}
}

// TestTenantHealthRedactsOtherTenants: on a node two tenants share,
// `show health tenant=acme` shows beta's check in flight only as "another
// tenant's check" (no id, checks, job, actor or tenant), its last check is
// the last one acme may see (its own or gpubridge's), never beta's, and
// acme's refused trigger does not name beta's run (issue 25 item 7).
func TestTenantHealthRedactsOtherTenants(t *testing.T) {
	e := newEnv(t, nil)
	e.serving("gpu-a")
	ctx := context.Background()
	e.c.SubmitTenant("acme", "gpu-a")
	e.c.SubmitTenant("beta", "gpu-a")
	e.c.States(ctx, nil)
	sched := e.cycle("quick").Submitted[0]
	if _, _, err := e.svc.Wait(ctx, sched.ID); err != nil {
		t.Fatal(err)
	}
	e.advance(time.Minute)
	r, err := e.svc.Trigger(ctx, health.Request{Node: "gpu-a", Tenant: "beta", Actor: "bob", Checks: []string{"probe"}})
	if err != nil {
		t.Fatal(err)
	}
	v := healthOf(t, e, "acme")
	if v.Running == nil || v.Running.ID != 0 || v.Running.Tenant != "" || v.Running.Actor != "" || v.Running.JobID != 0 ||
		len(v.Running.Checks) != 0 || v.Running.Key != "" || v.Running.Note != health.OtherTenantsRun {
		t.Errorf("acme sees beta's run in flight as %+v", v.Running)
	}
	if row := health.NodesTable([]health.NodeView{v}).Rows[0]; !slices.Contains(row, health.OtherTenantsRun) {
		t.Errorf("table row %q", row)
	}
	_, err = e.svc.Trigger(ctx, health.Request{Node: "gpu-a", Tenant: "acme", Checks: []string{"probe"}})
	if !errors.Is(err, health.ErrBusy) || strings.Contains(err.Error(), fmt.Sprintf("run %d", r.ID)) {
		t.Errorf("acme's trigger while beta's runs: %v", err)
	}
	if w := healthOf(t, e, "beta"); w.Running == nil || w.Running.ID != r.ID {
		t.Errorf("beta sees its own run as %+v", w.Running)
	}
	if a := healthOf(t, e, ""); a.Running == nil || a.Running.ID != r.ID || a.Running.Tenant != "beta" {
		t.Errorf("the admin sees %+v", a.Running)
	}
	if _, _, err := e.svc.Wait(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if v := healthOf(t, e, "acme"); v.Running != nil || v.Last == nil || v.Last.RunID != sched.ID {
		t.Errorf("acme's last check: %+v (running %+v), want the scheduled run %d", v.Last, v.Running, sched.ID)
	}
	if w := healthOf(t, e, "beta"); w.Last == nil || w.Last.RunID != r.ID {
		t.Errorf("beta's last check: %+v, want its run %d", w.Last, r.ID)
	}
}

// healthOf is gpu-a's line of `show health` for tenant (all for "").
func healthOf(t *testing.T, e *env, tenant string) health.NodeView {
	t.Helper()
	vs, err := e.svc.Health(context.Background(), health.HealthFilter{Node: "gpu-a", Tenant: tenant})
	if err != nil || len(vs) != 1 {
		t.Fatalf("Health(tenant %q) = %+v, %v", tenant, vs, err)
	}
	return vs[0]
}

// countBarrier is a store whose TenantRuns waits (up to a second) until
// two callers have counted: two processes that both count before either
// stores its run.
type countBarrier struct {
	health.Store
	wg sync.WaitGroup
}

func (b *countBarrier) TenantRuns(ctx context.Context, tenant string, since time.Time) (int, error) {
	n, err := b.Store.TenantRuns(ctx, tenant, since)
	b.wg.Done()
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
	}
	return n, err
}

// TestTenantCapHoldsAcrossProcesses: two services on one store (two CLI
// processes, or replicas) trigger acme's checks at once with a cap of one
// an hour: one run is stored, the other refused (issue 25 item 7: the
// count was checked in process, and both passed it).
func TestTenantCapHoldsAcrossProcesses(t *testing.T) {
	var p health.Params
	barrier := &countBarrier{}
	barrier.wg.Add(2)
	e := newEnv(t, func(q *health.Params) {
		q.Settings.TenantChecksPerHour = 1
		barrier.Store = q.Store
		q.Store = barrier
		p = *q
	}, "gpu-a", "gpu-b")
	second, err := health.New(p)
	if err != nil {
		t.Fatal(err)
	}
	e.serving("gpu-a")
	e.serving("gpu-b")
	e.c.SubmitTenant("acme", "gpu-a")
	e.c.SubmitTenant("acme", "gpu-b")
	ctx := context.Background()
	e.c.States(ctx, nil)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, svc := range []*health.Service{e.svc, second} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = svc.Trigger(ctx, health.Request{Node: []string{"gpu-a", "gpu-b"}[i], Tenant: "acme", Checks: []string{"probe"}})
		}()
	}
	wg.Wait()
	n, _ := e.st.TenantRuns(ctx, "acme", e.clock().Add(-time.Hour))
	limited := 0
	for _, err := range errs {
		if errors.Is(err, health.ErrRateLimited) {
			limited++
		} else if err != nil {
			t.Errorf("trigger: %v", err)
		}
	}
	if n != 1 || limited != 1 {
		t.Errorf("%d runs stored, %d refused (%v); want 1 and 1 with health.tenantChecksPerHour=1", n, limited, errs)
	}
}
