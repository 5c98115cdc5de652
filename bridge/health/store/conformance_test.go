package store

// The conformance tests every health.Store passes: Memory in unit tests,
// DB in integration tests against the testbed's MariaDB.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/check"
)

var (
	_ health.Store = (*DB)(nil)
	_ health.Store = (*Memory)(nil)
)

func conformance(t *testing.T, open func(t *testing.T) health.Store) {
	t.Run("node compare and set", func(t *testing.T) { testNodeCAS(t, open(t)) })
	t.Run("run lifecycle", func(t *testing.T) { testRunLifecycle(t, open(t)) })
	t.Run("finish conflict writes nothing", func(t *testing.T) { testFinishConflict(t, open(t)) })
	t.Run("override", func(t *testing.T) { testOverride(t, open(t)) })
	t.Run("prune", func(t *testing.T) { testPrune(t, open(t)) })
	t.Run("tenant cap", func(t *testing.T) { testTenantCap(t, open(t)) })
	t.Run("results visible to a tenant", func(t *testing.T) { testVisibleTo(t, open(t)) })
}

// testTenantCap: 12 tenant runs stored at once with a cap of 3 since t0:
// 3 are stored, the others refused with ErrRateLimited; a run of another
// tenant, and a run after the window, are not held back.
func testTenantCap(t *testing.T, s health.Store) {
	ctx := context.Background()
	const tries, max = 12, 3
	errs := make([]error, tries)
	var wg sync.WaitGroup
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.CreateTenantRun(ctx, health.Run{Key: uniqKey(), Node: "gpu-a", Checks: []string{"xid"}, Purpose: health.PurposeTenant,
				Tenant: "capped", RequestedAt: t0.Add(time.Duration(i) * time.Second)}, t0, max)
		}()
	}
	wg.Wait()
	stored, limited := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			stored++
		case errors.Is(err, health.ErrRateLimited):
			limited++
		default:
			t.Errorf("CreateTenantRun: %v", err)
		}
	}
	if stored != max || limited != tries-max {
		t.Errorf("%d stored, %d refused; want %d and %d", stored, limited, max, tries-max)
	}
	if n, err := s.TenantRuns(ctx, "capped", t0); err != nil || n != max {
		t.Errorf("TenantRuns = %d, %v; want %d", n, err, max)
	}
	if _, err := s.CreateTenantRun(ctx, health.Run{Key: uniqKey(), Node: "gpu-a", Tenant: "other", Purpose: health.PurposeTenant, RequestedAt: t0}, t0, max); err != nil {
		t.Errorf("another tenant: %v", err)
	}
	later := t0.Add(time.Hour)
	if _, err := s.CreateTenantRun(ctx, health.Run{Key: uniqKey(), Node: "gpu-a", Tenant: "capped", Purpose: health.PurposeTenant, RequestedAt: later}, later.Add(-time.Second), max); err != nil {
		t.Errorf("after the window: %v", err)
	}
}

// testVisibleTo: a tenant's filter keeps its own results and those of
// runs no tenant triggered, never another tenant's.
func testVisibleTo(t *testing.T, s health.Store) {
	ctx := context.Background()
	var want []int64
	for i, tenant := range []string{"", "acme", "beta", ""} {
		r, err := s.CreateRun(ctx, health.Run{Key: uniqKey(), Node: "gpu-v", Checks: []string{"xid"}, Tenant: tenant, RequestedAt: t0})
		if err != nil {
			t.Fatal(err)
		}
		done := r
		done.State, done.FinishedAt = health.RunDone, t0.Add(time.Duration(i+1)*time.Minute)
		res := []health.StoredResult{{RunID: r.ID, Node: "gpu-v", Check: "xid", Verdict: check.Pass, Tenant: tenant, At: done.FinishedAt}}
		if _, err := s.FinishRun(ctx, health.Finish{Run: done, Results: res}); err != nil {
			t.Fatal(err)
		}
		if tenant != "beta" {
			want = append([]int64{r.ID}, want...)
		}
	}
	got, err := s.Results(ctx, health.ResultFilter{Node: "gpu-v", VisibleTo: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, r := range got {
		ids = append(ids, r.RunID)
	}
	if d := cmp.Diff(want, ids); d != "" {
		t.Errorf("runs of the results acme sees (-want +got)\n%s", d)
	}
}

var t0 = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

var keySeq atomic.Int64

// uniqKey is a run key no other test run uses (run keys are unique across
// clusters).
func uniqKey() string {
	return fmt.Sprintf("hc%x-%d", time.Now().UnixNano(), keySeq.Add(1))
}

func testNodeCAS(t *testing.T, s health.Store) {
	ctx := context.Background()
	n := health.Node{Name: "gpu-a", State: health.BurnIn, Since: t0, Needed: 1, Reason: "acceptance checks pending"}
	stored, err := s.PutNode(ctx, n, &health.Event{Node: "gpu-a", At: t0, To: health.BurnIn, Reason: n.Reason})
	if err != nil || stored.Version != 1 {
		t.Fatalf("insert: %+v, %v", stored, err)
	}
	if _, err := s.PutNode(ctx, n, nil); !errors.Is(err, health.ErrConflict) {
		t.Fatalf("second insert: %v, want ErrConflict", err)
	}
	next := stored
	next.State, next.Passes, next.Checks = health.Drained, 0, []string{"site-a", "xid"}
	got, err := s.PutNode(ctx, next, nil)
	if err != nil || got.Version != 2 {
		t.Fatalf("update: %+v, %v", got, err)
	}
	if _, err := s.PutNode(ctx, next, nil); !errors.Is(err, health.ErrConflict) {
		t.Fatalf("stale update: %v, want ErrConflict", err)
	}
	all, err := s.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]health.Node{"gpu-a": {Name: "gpu-a", State: health.Drained, Since: t0, Needed: 1, Reason: "acceptance checks pending",
		Checks: []string{"site-a", "xid"}, Version: 2}}
	if diff := cmp.Diff(want, all); diff != "" {
		t.Errorf("Nodes (-want +got)\n%s", diff)
	}
	evs, err := s.Events(ctx, "gpu-a", t0)
	if err != nil || len(evs) != 1 || evs[0].To != health.BurnIn || evs[0].ID == 0 {
		t.Errorf("Events = %+v, %v", evs, err)
	}
}

func testRunLifecycle(t *testing.T, s health.Store) {
	ctx := context.Background()
	rec, err := s.PutNode(ctx, health.Node{Name: "gpu-a", State: health.Serving, Since: t0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.CreateRun(ctx, health.Run{Key: uniqKey(), Node: "gpu-a", Peers: []string{"gpu-b"}, Checks: []string{"site-a", "xid"},
		Purpose: health.PurposeTenant, Tenant: "acme", Actor: "alice", Model: "h100", GPUs: 4, RequestedAt: t0})
	if err != nil || r.ID == 0 || r.State != health.RunSubmitting {
		t.Fatalf("CreateRun: %+v, %v", r, err)
	}
	if err := s.SetRunJob(ctx, r.ID, 4711); err != nil {
		t.Fatal(err)
	}
	inflight, err := s.InFlight(ctx)
	if err != nil || len(inflight) != 1 || inflight[0].JobID != 4711 || inflight[0].State != health.RunSubmitted || !slices.Equal(inflight[0].Peers, []string{"gpu-b"}) {
		t.Fatalf("InFlight = %+v, %v", inflight, err)
	}
	if n, err := s.TenantRuns(ctx, "acme", t0.Add(-time.Hour)); err != nil || n != 1 {
		t.Errorf("TenantRuns(acme) = %d, %v", n, err)
	}
	if n, err := s.TenantRuns(ctx, "acme", t0.Add(time.Second)); err != nil || n != 0 {
		t.Errorf("TenantRuns(acme, later) = %d, %v", n, err)
	}
	done := inflight[0]
	done.State, done.FinishedAt = health.RunDone, t0.Add(time.Minute)
	drained := rec
	drained.State, drained.Reason, drained.Checks = health.Drained, "site-a failed: exit 1", []string{"site-a"}
	results := []health.StoredResult{
		{RunID: r.ID, Node: "gpu-a", Check: "site-a", Verdict: check.Fail, Reason: "exit 1", Values: []check.Value{{Name: "temp_c", Value: 95.5}},
			Start: t0.Add(10 * time.Second), End: t0.Add(12 * time.Second), ExitCode: 1, JobID: 4711, Tenant: "acme", Purpose: health.PurposeTenant, At: t0.Add(time.Minute)},
		{RunID: r.ID, Node: "gpu-a", Check: "xid", Verdict: check.Pass, ExitCode: 0, JobID: 4711, Tenant: "acme", Purpose: health.PurposeTenant,
			Start: t0.Add(12 * time.Second), End: t0.Add(13 * time.Second), At: t0.Add(time.Minute)},
	}
	fin := health.Finish{Run: done, Results: results, Evidence: []byte("evidence\x00bytes"), Nodes: []health.Node{drained},
		Events: []health.Event{{Node: "gpu-a", At: t0.Add(time.Minute), From: health.Serving, To: health.Drained, Reason: drained.Reason, RunID: r.ID}}}
	won, err := s.FinishRun(ctx, fin)
	if err != nil || !won {
		t.Fatalf("FinishRun = %v, %v", won, err)
	}
	if won, err := s.FinishRun(ctx, fin); err != nil || won {
		t.Fatalf("FinishRun again = %v, %v; want false (finished once)", won, err)
	}
	if inflight, _ := s.InFlight(ctx); len(inflight) != 0 {
		t.Errorf("InFlight after finish = %+v", inflight)
	}
	got, err := s.Run(ctx, r.ID)
	if err != nil || got.State != health.RunDone || !got.FinishedAt.Equal(t0.Add(time.Minute)) || got.Tenant != "acme" || got.Model != "h100" {
		t.Errorf("Run = %+v, %v", got, err)
	}
	if ev, err := s.Evidence(ctx, r.ID); err != nil || string(ev) != "evidence\x00bytes" {
		t.Errorf("Evidence = %q, %v", ev, err)
	}
	res, err := s.Results(ctx, health.ResultFilter{RunID: r.ID})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(results, res, cmpopts.SortSlices(func(a, b health.StoredResult) bool { return a.Check < b.Check })); diff != "" {
		t.Errorf("Results (-want +got)\n%s", diff)
	}
	for name, f := range map[string]health.ResultFilter{
		"other tenant": {Tenant: "other"}, "other node": {Node: "gpu-b"}, "later": {Since: t0.Add(2 * time.Minute)}, "other check": {Check: "dcgm-r1"},
	} {
		if res, err := s.Results(ctx, f); err != nil || len(res) != 0 {
			t.Errorf("Results(%s) = %+v, %v; want none", name, res, err)
		}
	}
	if res, err := s.Results(ctx, health.ResultFilter{Tenant: "acme", Check: "xid", Limit: 1}); err != nil || len(res) != 1 || res[0].Check != "xid" {
		t.Errorf("Results(acme, xid) = %+v, %v", res, err)
	}
	nodes, _ := s.Nodes(ctx)
	if nodes["gpu-a"].State != health.Drained || nodes["gpu-a"].Version != 2 {
		t.Errorf("node after finish = %+v", nodes["gpu-a"])
	}
	if _, err := s.Run(ctx, r.ID+1000); !errors.Is(err, health.ErrNotFound) {
		t.Errorf("Run(missing) err = %v", err)
	}
}

func testFinishConflict(t *testing.T, s health.Store) {
	ctx := context.Background()
	rec, _ := s.PutNode(ctx, health.Node{Name: "gpu-a", State: health.Serving, Since: t0}, nil)
	r, err := s.CreateRun(ctx, health.Run{Key: uniqKey(), Node: "gpu-a", Checks: []string{"x"}, Purpose: health.PurposeSchedule, RequestedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetRunJob(ctx, r.ID, 1); err != nil {
		t.Fatal(err)
	}
	// Another writer moves the record first.
	if _, err := s.PutNode(ctx, rec, nil); err != nil {
		t.Fatal(err)
	}
	r.State, r.FinishedAt = health.RunDone, t0
	stale := rec
	stale.State = health.Drained
	_, err = s.FinishRun(ctx, health.Finish{Run: r, Nodes: []health.Node{stale},
		Results: []health.StoredResult{{RunID: r.ID, Node: "gpu-a", Check: "x", Verdict: check.Fail, At: t0}}})
	if !errors.Is(err, health.ErrConflict) {
		t.Fatalf("FinishRun with a stale record: %v, want ErrConflict", err)
	}
	if inflight, _ := s.InFlight(ctx); len(inflight) != 1 {
		t.Errorf("the run is no longer in flight after a failed finish: %+v", inflight)
	}
	if res, _ := s.Results(ctx, health.ResultFilter{RunID: r.ID}); len(res) != 0 {
		t.Errorf("results written by a failed finish: %+v", res)
	}
}

func testOverride(t *testing.T, s health.Store) {
	ctx := context.Background()
	rec, _ := s.PutNode(ctx, health.Node{Name: "gpu-a", State: health.Drained, Since: t0, Reason: "x failed"}, nil)
	next := health.Node{Name: "gpu-a", State: health.Serving, Since: t0.Add(time.Hour), Reason: "resumed by alice: swapped", Version: rec.Version}
	got, err := s.Override(ctx, health.Override{Node: next, Actor: "alice", Action: "resume", Before: rec, After: next,
		Event: health.Event{Node: "gpu-a", At: t0.Add(time.Hour), From: health.Drained, To: health.Serving, Reason: next.Reason, Actor: "alice"}})
	if err != nil || got.State != health.Serving || got.Version != rec.Version+1 {
		t.Fatalf("Override = %+v, %v", got, err)
	}
	evs, _ := s.Events(ctx, "gpu-a", t0.Add(time.Minute))
	if len(evs) != 1 || evs[0].Actor != "alice" || evs[0].To != health.Serving {
		t.Errorf("events = %+v", evs)
	}
	if _, err := s.Override(ctx, health.Override{Node: next, Event: health.Event{Node: "gpu-a", At: t0}}); !errors.Is(err, health.ErrConflict) {
		t.Errorf("stale override: %v, want ErrConflict", err)
	}
}

func testPrune(t *testing.T, s health.Store) {
	ctx := context.Background()
	mk := func(_ string, at time.Time, finish bool) int64 {
		r, err := s.CreateRun(ctx, health.Run{Key: uniqKey(), Node: "gpu-a", Checks: []string{"x"}, Purpose: health.PurposeSchedule, RequestedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetRunJob(ctx, r.ID, 7); err != nil {
			t.Fatal(err)
		}
		if finish {
			r.State, r.FinishedAt = health.RunDone, at
			if _, err := s.FinishRun(ctx, health.Finish{Run: r, Evidence: []byte("out"),
				Results: []health.StoredResult{{RunID: r.ID, Node: "gpu-a", Check: "x", Verdict: check.Pass, At: at}}}); err != nil {
				t.Fatal(err)
			}
		}
		return r.ID
	}
	old := mk("hold", t0, true)
	recent := mk("hrecent", t0.Add(48*time.Hour), true)
	flying := mk("hfly", t0, false)
	if _, err := s.PutNode(ctx, health.Node{Name: "gpu-a", State: health.Serving, Since: t0}, &health.Event{Node: "gpu-a", At: t0, To: health.Serving}); err != nil {
		t.Fatal(err)
	}
	n, err := s.Prune(ctx, t0.Add(24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1", n, err)
	}
	if _, err := s.Run(ctx, old); !errors.Is(err, health.ErrNotFound) {
		t.Errorf("old run still there: %v", err)
	}
	if res, _ := s.Results(ctx, health.ResultFilter{RunID: old}); len(res) != 0 {
		t.Errorf("old results still there")
	}
	for _, id := range []int64{recent, flying} {
		if _, err := s.Run(ctx, id); err != nil {
			t.Errorf("run %d pruned: %v", id, err)
		}
	}
	if evs, _ := s.Events(ctx, "gpu-a", t0); len(evs) != 1 {
		t.Errorf("events pruned: %+v", evs)
	}
}
