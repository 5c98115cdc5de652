package health_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/check"
)

// TestTwoNodeCheck: a two-node check runs as one job on both nodes (its
// result stored for each), a failure drains both; the refusals: no peer,
// a peer for a single-node check, mixing, the node itself, an unmanaged
// or held peer, a peer of another model or partition, a busy peer, and a
// tenant that does not use the peer.
func TestTwoNodeCheck(t *testing.T) {
	e := newEnv(t, func(p *health.Params) {
		p.Catalog["pair"] = check.Check{Name: "pair", Kind: check.KindSite, Nodes: 2, Command: "srun --nodes=2 pair", Timeout: time.Minute}
	}, "gpu-a", "gpu-b", "gpu-c", "gpu-d")
	ctx := context.Background()
	for _, n := range []string{"gpu-a", "gpu-b", "gpu-c"} {
		e.serving(n)
	}
	refusals := []struct {
		q    health.Request
		is   error
		want string
	}{
		{health.Request{Node: "gpu-a", Checks: []string{"pair"}}, health.ErrInvalid, "pair spans 2 nodes: name the second with peer=NODE"},
		{health.Request{Node: "gpu-a", Checks: []string{"probe"}, Peer: "gpu-b"}, health.ErrInvalid, "peer=gpu-b is for two-node checks"},
		{health.Request{Node: "gpu-a", Checks: []string{"pair", "probe"}, Peer: "gpu-b"}, health.ErrInvalid, "probe is a single-node check; a two-node run holds only two-node checks"},
		{health.Request{Node: "gpu-a", Checks: []string{"pair"}, Peer: "gpu-a"}, health.ErrInvalid, "peer=gpu-a is the node itself"},
		{health.Request{Node: "gpu-a", Checks: []string{"pair"}, Peer: "other"}, health.ErrUnknownNode, "peer other is not under gpubridge's health management"},
		{health.Request{Node: "gpu-a", Checks: []string{"pair"}, Peer: "gpu-d"}, health.ErrBusy, "gpu-d is new to gpubridge"},
		{health.Request{Node: "gpu-a", Checks: []string{"pair"}, Peer: "gpu-b", Tenant: "acme"}, health.ErrNotAllowed, "tenant acme has no job running on gpu-a"},
	}
	for _, r := range refusals {
		if _, err := e.svc.Trigger(ctx, r.q); !errors.Is(err, r.is) || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%+v: %v; want %v with %q", r.q, err, r.is, r.want)
		}
	}
	if len(e.c.Jobs()) != 0 {
		t.Fatalf("a refused request submitted %+v", e.c.Jobs())
	}

	r, err := e.svc.Trigger(ctx, health.Request{Node: "gpu-a", Checks: []string{"pair"}, Peer: "gpu-b", Actor: "root"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Peers, []string{"gpu-b"}) || !slices.Equal(r.AllNodes(), []string{"gpu-a", "gpu-b"}) {
		t.Errorf("run %+v", r)
	}
	j := e.c.Jobs()[0]
	if !slices.Equal(j.Req.Nodes, []string{"gpu-a", "gpu-b"}) || j.Req.Reservation != "" || !strings.Contains(j.Req.Script, "srun --nodes=2 pair") {
		t.Errorf("job request %+v", j.Req)
	}
	for _, n := range []string{"gpu-a", "gpu-b"} {
		if _, err := e.svc.Trigger(ctx, health.Request{Node: n, Checks: []string{"probe"}}); !errors.Is(err, health.ErrBusy) {
			t.Errorf("a check on %s while the pair runs: %v", n, err)
		}
	}
	if _, err := e.svc.Trigger(ctx, health.Request{Node: "gpu-c", Checks: []string{"pair"}, Peer: "gpu-b"}); !errors.Is(err, health.ErrBusy) {
		t.Errorf("gpu-b as a peer while it runs a pair: %v", err)
	}
	run, res, err := e.svc.Wait(ctx, r.ID)
	if err != nil || run.State != health.RunDone || len(res) != 2 {
		t.Fatalf("Wait = %+v %+v %v", run, res, err)
	}
	var nodes []string
	for _, x := range res {
		nodes = append(nodes, x.Node)
		if x.Check != "pair" || x.Verdict != check.Pass {
			t.Errorf("result %+v", x)
		}
	}
	slices.Sort(nodes)
	if !slices.Equal(nodes, []string{"gpu-a", "gpu-b"}) {
		t.Errorf("results for %v, want one per node", nodes)
	}

	// The peer is faulty: both nodes are drained (the check cannot tell
	// which of them is bad).
	e.c.Check = func(node, c string) (string, int) {
		if node == "gpu-b" {
			return "reason=link down\n", 1
		}
		return "ok=1\n", 0
	}
	r, err = e.svc.Trigger(ctx, health.Request{Node: "gpu-a", Checks: []string{"pair"}, Peer: "gpu-b", Actor: "root"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.svc.Wait(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"gpu-a", "gpu-b"} {
		if rec := e.rec(n); rec.State != health.Drained || !strings.Contains(rec.Reason, "pair failed: link down") {
			t.Errorf("%s after the failing pair: %+v", n, rec)
		}
		if sn := e.c.Node(n); !sn.Drain {
			t.Errorf("%s not drained in Slurm: %+v", n, sn)
		}
	}
	if rec := e.rec("gpu-c"); rec.State != health.Serving {
		t.Errorf("gpu-c %+v", rec)
	}
	// A held node runs its acceptance set alone.
	if _, err := e.svc.Trigger(ctx, health.Request{Node: "gpu-c", Checks: []string{"pair"}, Peer: "gpu-a"}); !errors.Is(err, health.ErrNotAllowed) || !strings.Contains(err.Error(), "peer gpu-a is drained") {
		t.Errorf("a held peer: %v", err)
	}
}

// TestCheckNow: with a wait it returns the results; a run that outlasts
// the wait (its node drained by a person while the job waits) is
// ErrStillRunning with the run; without a wait the submitted run.
func TestCheckNow(t *testing.T) {
	e := newEnv(t, func(p *health.Params) {
		sleep := p.Sleep
		p.Sleep = func(ctx context.Context, d time.Duration) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return sleep(ctx, d)
		}
	}, "gpu-a", "gpu-b")
	ctx := context.Background()
	e.serving("gpu-a")
	e.serving("gpu-b")
	r, res, err := e.svc.CheckNow(ctx, health.Request{Node: "gpu-a", Checks: []string{"probe"}}, time.Minute)
	if err != nil || r.State != health.RunDone || len(res) != 1 || res[0].Verdict != check.Pass {
		t.Fatalf("CheckNow with a wait: %+v %+v %v", r, res, err)
	}
	r, res, err = e.svc.CheckNow(ctx, health.Request{Node: "gpu-b", Checks: []string{"probe"}}, 0)
	if err != nil || r.State != health.RunSubmitted || res != nil {
		t.Fatalf("CheckNow without a wait: %+v %+v %v", r, res, err)
	}
	e.svc.Wait(ctx, r.ID)
	e.c.PersonDrains("gpu-b", "ops: cable")
	// The record still says serving until a cycle sees the person's drain.
	_, _, err = e.svc.CheckNow(ctx, health.Request{Node: "gpu-b", Checks: []string{"probe"}}, 20*time.Millisecond)
	if !errors.Is(err, health.ErrStillRunning) || !strings.Contains(err.Error(), "it goes on: `gpubridge show checks run=") {
		t.Errorf("a run that outlasts the wait: %v", err)
	}
}
