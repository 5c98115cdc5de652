//go:build integration

package slurmadapter

// Acceptance tests of the health lifecycle on the real testbed: the
// service's cycles are driven directly with an injected clock (one cycle =
// one schedule interval), waiting between them only for the check jobs to
// end. The site check "probe" fails while the test's fault file exists.

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/check"
)

const interval = time.Minute // the quick schedule's "@every 1m"

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now().UTC().Truncate(time.Second)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func cycle(t *testing.T, svc *health.Service, schedule string) health.Report {
	t.Helper()
	rep, err := svc.Cycle(context.Background(), schedule)
	if err != nil {
		t.Fatalf("cycle %s: %v", schedule, err)
	}
	return rep
}

func record(t *testing.T, st health.Store) health.Node {
	t.Helper()
	recs, err := st.Nodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return recs[node]
}

func seedServing(t *testing.T, st health.Store, at time.Time) {
	t.Helper()
	if _, err := st.PutNode(context.Background(), health.Node{Name: node, State: health.Serving, Since: at}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestFailingCheckDrainsGpuAOnTestbed: a site check that starts failing
// drains gpu-a within two intervals; a tenant's job pinned to gpu-a does
// not start while it is held; with the fault cleared gpu-a is resumed only
// after RequalifyPasses (2) passing acceptance runs, and the job starts.
func TestFailingCheckDrainsGpuAOnTestbed(t *testing.T) {
	b := newBed(t)
	tenant := b.tag + "ten"
	b.addAccount(tenant, "alice")
	clk := newClock()
	svc, st := b.service(clk.Now, nil)
	seedServing(t, st, clk.Now())

	cycle(t, svc, "quick") // a passing run
	b.settle(st)
	clk.Add(interval)
	faultAt := clk.Now()
	b.setFault(true)
	cycle(t, svc, "quick") // harvests the pass; submits the run that fails
	if sn := b.slurmNode(); sn.Unavailable() {
		t.Fatalf("gpu-a drained before a failing run was harvested: %+v", sn)
	}
	b.settle(st)
	clk.Add(interval)
	rep := cycle(t, svc, "quick")
	if d := clk.Now().Sub(faultAt); d > 2*interval {
		t.Fatalf("drained %s after the fault; want within 2 x %s", d, interval)
	}
	sn := b.slurmNode()
	const want = "gpubridge: probe failed: sensor hot (exit 1); temp_c=95 > 90 (h100)"
	if !sn.Drain || sn.Reason != want {
		t.Fatalf("gpu-a after the failing run: drain=%v reason %q; want %q (events %+v)", sn.Drain, sn.Reason, want, rep.Events)
	}
	if fences, _ := b.a.Fences(context.Background()); !fences[node] {
		t.Fatal("gpu-a drained but not fenced")
	}
	job := b.sbatch("alice", tenant)

	for i := 0; i < 2; i++ { // still broken
		clk.Add(interval)
		cycle(t, svc, "acceptance")
		b.settle(st)
		if r := record(t, st); r.State != health.Drained || r.Passes != 0 {
			t.Fatalf("faulty round %d: %+v", i, r)
		}
		if s := b.jobState(job); !strings.HasPrefix(s, "PENDING") {
			t.Fatalf("tenant job %s on a drained gpu-a", s)
		}
	}
	b.setFault(false)
	var passes []int
	for i := 0; i < 4; i++ {
		clk.Add(interval)
		cycle(t, svc, "acceptance")
		r := record(t, st)
		if r.State == health.Serving {
			break
		}
		passes = append(passes, r.Passes)
		if sn := b.slurmNode(); !sn.Drain || !health.Ours(sn.Reason) {
			t.Fatalf("gpu-a with %d/%d passes: %+v", r.Passes, r.Needed, sn)
		}
		if s := b.jobState(job); !strings.HasPrefix(s, "PENDING") {
			t.Fatalf("tenant job %s on gpu-a with %d/%d passes", s, r.Passes, r.Needed)
		}
		b.settle(st)
	}
	// The first cycle harvests the last failing run, the next one pass;
	// the one after resumes.
	if !slices.Equal(passes, []int{0, 1}) || record(t, st).State != health.Serving {
		t.Fatalf("passes per cycle %v, state %s; want [0 1] then serving", passes, record(t, st).State)
	}
	if sn := b.slurmNode(); sn.Unavailable() {
		t.Fatalf("gpu-a not resumed after requalifying: %+v", sn)
	}
	if fences, _ := b.a.Fences(context.Background()); fences[node] {
		t.Fatal("gpu-a still fenced after requalifying")
	}
	b.waitJob(job, 30*time.Second, "RUNNING")
	evs, err := st.Events(context.Background(), node, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var path []string
	for _, e := range evs {
		path = append(path, string(e.From)+">"+string(e.To))
	}
	if !slices.Equal(path, []string{"serving>drained", "drained>requalify", "requalify>serving"}) {
		t.Errorf("events %v", path)
	}
}

// TestPersonDrainedGpuAStaysDrainedOnTestbed: gpu-a drained by a person is
// neither checked nor resumed through cycles with the fault on and off; a
// drain of gpubridge's that a person takes over is kept too.
func TestPersonDrainedGpuAStaysDrainedOnTestbed(t *testing.T) {
	b := newBed(t)
	clk := newClock()
	svc, st := b.service(clk.Now, nil)
	seedServing(t, st, clk.Now())
	const personal = "hlt-person: PSU swap"
	b.env.Exec(t, "", "scontrol", "update", "nodename="+node, "state=drain", "reason="+personal)
	for _, fault := range []bool{true, false, true} {
		b.setFault(fault)
		for _, s := range []string{"quick", "acceptance"} {
			clk.Add(interval)
			cycle(t, svc, s)
		}
		if sn := b.slurmNode(); !sn.Drain || sn.Reason != personal {
			t.Fatalf("gpu-a after cycles (fault %v): %+v", fault, sn)
		}
	}
	if r := record(t, st); r.State != health.External {
		t.Fatalf("state %s, want external", r.State)
	}
	if runs, _ := st.InFlight(context.Background()); len(runs) != 0 {
		t.Fatalf("check runs on a node a person drained: %+v", runs)
	}
	if res, _ := st.Results(context.Background(), health.ResultFilter{Node: node}); len(res) != 0 {
		t.Fatalf("results on a node a person drained: %+v", res)
	}
	if _, err := svc.ResumeNode(context.Background(), node, "tester", ""); !errors.Is(err, health.ErrNotAllowed) {
		t.Fatalf("resume node of a person's drain: %v", err)
	}

	// The person resumes it: back from repair, gpubridge holds it until it
	// requalifies; then the person drains it again with a reason of theirs.
	b.env.Exec(t, "", "scontrol", "update", "nodename="+node, "state=resume")
	clk.Add(interval)
	cycle(t, svc, "acceptance")
	if r := record(t, st); r.State != health.Requalify {
		t.Fatalf("back from the person's drain: %+v", r)
	}
	b.settle(st)
	const takeover = "hlt-person: RMA 4711"
	b.env.Exec(t, "", "scontrol", "update", "nodename="+node, "state=drain", "reason="+takeover)
	b.setFault(false)
	for i := 0; i < 3; i++ {
		clk.Add(interval)
		cycle(t, svc, "acceptance")
		b.settle(st)
	}
	if sn := b.slurmNode(); !sn.Drain || sn.Reason != takeover {
		t.Fatalf("gpu-a after passing cycles: %+v; want the person's drain kept", sn)
	}
	if r := record(t, st); r.State != health.External {
		t.Fatalf("state %s, want external", r.State)
	}
}

// TestNewGpuAGetsNoTenantJobBeforeAcceptanceOnTestbed: gpu-a new to
// gpubridge (no record) is held at the first cycle; a tenant's job pinned
// to it waits while both acceptance runs (AcceptancePasses 2) run, and
// starts once they passed.
func TestNewGpuAGetsNoTenantJobBeforeAcceptanceOnTestbed(t *testing.T) {
	b := newBed(t)
	tenant := b.tag + "ten"
	b.addAccount(tenant, "alice")
	clk := newClock()
	svc, st := b.service(clk.Now, func(s *health.Settings) { s.Policy.AcceptancePasses = 2 })
	rep := cycle(t, svc, "acceptance")
	if r := record(t, st); r.State != health.BurnIn || len(rep.Submitted) != 1 || !rep.Submitted[0].Held {
		t.Fatalf("first cycle: %+v, submitted %+v", r, rep.Submitted)
	}
	sn := b.slurmNode()
	if !sn.Drain || !strings.HasPrefix(sn.Reason, "gpubridge: burn-in (0/2 passed)") {
		t.Fatalf("gpu-a after the first cycle: %+v", sn)
	}
	job := b.sbatch("alice", tenant)
	for want := 1; want <= 2; want++ {
		b.settle(st)
		if s := b.jobState(job); !strings.HasPrefix(s, "PENDING") {
			t.Fatalf("tenant job %s before the acceptance set passed (%d/2)", s, want-1)
		}
		clk.Add(interval)
		cycle(t, svc, "acceptance")
		if r := record(t, st); want < 2 && (r.State != health.BurnIn || r.Passes != want) {
			t.Fatalf("after pass %d: %+v", want, r)
		}
	}
	if r := record(t, st); r.State != health.Serving {
		t.Fatalf("state %s after two passes", r.State)
	}
	b.waitJob(job, 30*time.Second, "RUNNING")
}

// TestTenantCheckOnTestbed: a tenant's check on a node it does not use is
// refused; on its own node it runs under the health service account (its
// job is not the tenant's: nothing is billed to it) and its result is the
// tenant's only; a third check within the hour is refused.
func TestTenantCheckOnTestbed(t *testing.T) {
	b := newBed(t)
	tenant := b.tag + "ten"
	b.addAccount(tenant, "alice")
	clk := newClock()
	svc, st := b.service(clk.Now, func(s *health.Settings) { s.Nodes = []string{node, "cpu-a"} })
	ctx := context.Background()
	seedServing(t, st, clk.Now())
	if _, err := st.PutNode(ctx, health.Node{Name: "cpu-a", State: health.Serving, Since: clk.Now()}, nil); err != nil {
		t.Fatal(err)
	}
	job := b.sbatch("alice", tenant)
	b.waitJob(job, 30*time.Second, "RUNNING")

	_, err := svc.Trigger(ctx, health.Request{Node: "cpu-a", Tenant: tenant, Actor: "alice", Checks: []string{"probe"}})
	if !errors.Is(err, health.ErrNotAllowed) {
		t.Fatalf("tenant check on cpu-a: %v, want ErrNotAllowed", err)
	}
	if runs, _ := st.InFlight(ctx); len(runs) != 0 {
		t.Fatalf("a refused check submitted a run: %+v", runs)
	}
	r, err := svc.Trigger(ctx, health.Request{Node: node, Tenant: tenant, Actor: "alice", Checks: []string{"probe"}})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	run, res, err := svc.Wait(wctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if run.State != health.RunDone || len(res) != 1 || res[0].Verdict != check.Pass || res[0].Tenant != tenant {
		t.Fatalf("run %+v results %+v", run, res)
	}
	// The check job's account in slurmdbd: the health service account.
	acct := strings.TrimSpace(b.env.Exec(t, "", "sacct", "-X", "-n", "-P", "-j", itoa(run.JobID), "-o", "account"))
	if acct != b.account {
		t.Fatalf("check job %d ran under account %q, want the health service account %q", run.JobID, acct, b.account)
	}
	tenantJobs := strings.Fields(b.env.Exec(t, "", "sacct", "-X", "-n", "-P", "-a", "-A", tenant, "-S", "now-1hour", "-o", "jobid"))
	if !slices.Equal(tenantJobs, []string{itoa(job)}) {
		t.Fatalf("jobs under the tenant's account: %v, want only its own %d", tenantJobs, job)
	}
	if mine, _ := svc.Results(ctx, health.ResultFilter{Tenant: tenant}); len(mine) != 1 {
		t.Errorf("the tenant's results: %+v", mine)
	}
	if other, _ := svc.Results(ctx, health.ResultFilter{Tenant: tenant + "x"}); len(other) != 0 {
		t.Errorf("another tenant sees: %+v", other)
	}
	r2, err := svc.Trigger(ctx, health.Request{Node: node, Tenant: tenant, Actor: "alice", Checks: []string{"probe"}})
	if err != nil {
		t.Fatalf("second check: %v", err)
	}
	if _, _, err := svc.Wait(wctx, r2.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Trigger(ctx, health.Request{Node: node, Tenant: tenant, Actor: "alice", Checks: []string{"probe"}}); !errors.Is(err, health.ErrRateLimited) {
		t.Fatalf("third check in an hour: %v, want ErrRateLimited", err)
	}
	// Another process on the same database (a restart, another CLI)
	// counts the same runs.
	svc2, _ := b.service(clk.Now, func(s *health.Settings) { s.Nodes = []string{node, "cpu-a"} })
	if _, err := svc2.Trigger(ctx, health.Request{Node: node, Tenant: tenant, Actor: "alice", Checks: []string{"probe"}}); !errors.Is(err, health.ErrRateLimited) {
		t.Fatalf("third check in an hour from another process: %v, want ErrRateLimited", err)
	}
	testOtherTenantRedacted(t, b, svc, tenant, r2.ID)
}

// testOtherTenantRedacted: another tenant runs a job on the node and checks
// it; `show health tenant=X` of the first shows that check in flight only
// as another tenant's and keeps its own run as the last check (issue 25
// item 7), while the other tenant sees its own.
func testOtherTenantRedacted(t *testing.T, b *bed, svc *health.Service, tenant string, lastOwn int64) {
	ctx := context.Background()
	other := b.tag + "oth"
	b.addAccount(other, "bob")
	b.waitJob(b.sbatch("bob", other), 30*time.Second, "RUNNING")
	r, err := svc.Trigger(ctx, health.Request{Node: node, Tenant: other, Actor: "bob", Checks: []string{"probe"}})
	if err != nil {
		t.Fatal(err)
	}
	if v := nodeView(t, svc, tenant); v.Running == nil || v.Running.ID != 0 || v.Running.Tenant != "" || len(v.Running.Checks) != 0 {
		t.Errorf("%s sees %s's check in flight as %+v", tenant, other, v.Running)
	}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if _, _, err := svc.Wait(wctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if v := nodeView(t, svc, tenant); v.Last == nil || v.Last.RunID != lastOwn {
		t.Errorf("%s's last check: %+v, want its run %d (not %s's run %d)", tenant, v.Last, lastOwn, other, r.ID)
	}
	if v := nodeView(t, svc, other); v.Last == nil || v.Last.RunID != r.ID {
		t.Errorf("%s's last check: %+v, want its run %d", other, v.Last, r.ID)
	}
}

// nodeView is the node's line of `show health tenant=X`.
func nodeView(t *testing.T, svc *health.Service, tenant string) health.NodeView {
	t.Helper()
	vs, err := svc.Health(context.Background(), health.HealthFilter{Node: node, Tenant: tenant})
	if err != nil || len(vs) != 1 {
		t.Fatalf("Health(tenant %s) = %+v, %v", tenant, vs, err)
	}
	return vs[0]
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
