package health

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/health/check"
)

var (
	at     = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	policy = Policy{AcceptancePasses: 1, RequalifyPasses: 3}
)

func TestObserve(t *testing.T) {
	idle := SlurmNode{Name: "gpu-a"}
	personal := SlurmNode{Name: "gpu-a", Drain: true, Reason: "ops: PSU swap"}
	ours := SlurmNode{Name: "gpu-a", Drain: true, Reason: "gpubridge: probe failed: exit 1"}
	down := SlurmNode{Name: "gpu-a", Down: true, Reason: "Not responding"}
	cases := map[string]struct {
		rec    *Node
		sn     SlurmNode
		want   State
		needed int
		event  bool
	}{
		"new node burns in":                            {nil, idle, BurnIn, 1, true},
		"new node drained by us (store lost) burns in": {nil, ours, BurnIn, 1, true},
		"new node drained by a person is external":     {nil, personal, External, 0, true},
		"serving node drained by a person":             {&Node{State: Serving}, personal, External, 0, true},
		"held node drained by a person":                {&Node{State: Drained, Needed: 3}, personal, External, 0, true},
		"node down for slurmctld's reason":             {&Node{State: Serving}, down, External, 0, true},
		"external stays while drained":                 {&Node{State: External}, personal, External, 0, false},
		"external back requalifies":                    {&Node{State: External}, idle, Requalify, 3, true},
		"serving stays":                                {&Node{State: Serving}, idle, Serving, 0, false},
		"drained by us stays":                          {&Node{State: Drained, Needed: 3}, ours, Drained, 3, false},
		"held and resumed outside stays held":          {&Node{State: Requalify, Needed: 3, Passes: 1}, idle, Requalify, 3, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.rec != nil {
				tc.rec.Name = "gpu-a"
			}
			got, ev := Observe(tc.rec, tc.sn, at, policy)
			if got.State != tc.want || got.Needed != tc.needed || (ev != nil) != tc.event {
				t.Fatalf("Observe = %+v, event %+v; want %s needing %d, event %v", got, ev, tc.want, tc.needed, tc.event)
			}
			if ev != nil && (ev.To != tc.want || ev.Node != "gpu-a" || !ev.At.Equal(at)) {
				t.Errorf("event %+v", ev)
			}
		})
	}
	got, _ := Observe(nil, personal, at, policy)
	if got.Reason != "drained outside gpubridge: ops: PSU swap" {
		t.Errorf("external reason %q", got.Reason)
	}
}

func res(c string, v check.Verdict, reason string) CheckResult {
	return CheckResult{Check: c, Result: check.Result{Verdict: v, Reason: reason}}
}

func TestApply(t *testing.T) {
	pass, warn, fail := res("probe", check.Pass, ""), res("probe", check.Warn, "fan slow"), res("probe", check.Fail, "exit 1")
	fatal := CheckResult{Check: "fp", Result: check.Result{Verdict: check.Fail, Reason: "exit 1"}, Fatal: true}
	other := res("burnin", check.Pass, "")
	cases := map[string]struct {
		rec   Node
		o     Outcome
		want  Node
		event bool
	}{
		"serving pass": {Node{State: Serving}, Outcome{Results: []CheckResult{pass}}, Node{State: Serving}, false},
		"serving fail drains": {Node{State: Serving}, Outcome{RunID: 7, Results: []CheckResult{pass, fail}},
			Node{State: Drained, Since: at, Needed: 3, Reason: "probe failed: exit 1", Checks: []string{"probe"}}, true},
		"serving fatal": {Node{State: Serving}, Outcome{Results: []CheckResult{fatal}},
			Node{State: Drained, Since: at, Needed: 3, Reason: "fp failed: exit 1", Checks: []string{"fp"}, Fatal: true}, true},
		"serving warn is suspect": {Node{State: Serving}, Outcome{Results: []CheckResult{warn}},
			Node{State: Suspect, Since: at, Reason: "probe warned: fan slow", Checks: []string{"probe"}}, true},
		"suspect warn again stays": {Node{State: Suspect, Since: at.Add(-time.Hour), Reason: "probe warned: fan slow", Checks: []string{"probe"}},
			Outcome{Results: []CheckResult{warn}}, Node{State: Suspect, Since: at.Add(-time.Hour), Reason: "probe warned: fan slow", Checks: []string{"probe"}}, false},
		"suspect passes other checks, stays": {Node{State: Suspect, Checks: []string{"probe"}}, Outcome{Results: []CheckResult{other}},
			Node{State: Suspect, Checks: []string{"probe"}}, false},
		"suspect passes its check, serves": {Node{State: Suspect, Checks: []string{"probe"}}, Outcome{Results: []CheckResult{other, pass}},
			Node{State: Serving, Since: at, Reason: "the checks that warned pass again"}, true},
		"suspect fails drains": {Node{State: Suspect, Checks: []string{"probe"}}, Outcome{Results: []CheckResult{fail}},
			Node{State: Drained, Since: at, Needed: 3, Reason: "probe failed: exit 1", Checks: []string{"probe"}}, true},
		"held ignores a non-acceptance run": {Node{State: Drained, Needed: 3}, Outcome{Results: []CheckResult{pass}}, Node{State: Drained, Needed: 3}, false},
		"drained first pass requalifies": {Node{State: Drained, Needed: 3, Reason: "probe failed: exit 1"}, Outcome{Held: true, Results: []CheckResult{pass}},
			Node{State: Requalify, Since: at, Needed: 3, Passes: 1, Reason: "probe failed: exit 1"}, true},
		"requalify second pass": {Node{State: Requalify, Needed: 3, Passes: 1, Reason: "r"}, Outcome{Held: true, Results: []CheckResult{pass}},
			Node{State: Requalify, Needed: 3, Passes: 2, Reason: "r"}, false},
		"requalify third pass serves": {Node{State: Requalify, Needed: 3, Passes: 2, Reason: "r", Checks: []string{"probe"}}, Outcome{Held: true, Results: []CheckResult{pass}},
			Node{State: Serving, Since: at, Reason: "passed 3 of 3 acceptance runs in a row"}, true},
		"requalify fail resets": {Node{State: Requalify, Needed: 3, Passes: 2, Reason: "probe failed: exit 1", Checks: []string{"probe"}},
			Outcome{Held: true, Results: []CheckResult{fail}}, Node{State: Drained, Since: at, Needed: 3, Reason: "probe failed: exit 1", Checks: []string{"probe"}}, true},
		"requalify warn resets": {Node{State: Requalify, Needed: 3, Passes: 1, Reason: "x failed", Checks: []string{"x"}},
			Outcome{Held: true, Results: []CheckResult{warn}}, Node{State: Drained, Since: at, Needed: 3, Reason: "probe warned: fan slow", Checks: []string{"x", "probe"}}, true},
		"drained fail again same reason": {Node{State: Drained, Needed: 3, Reason: "probe failed: exit 1", Checks: []string{"probe"}},
			Outcome{Held: true, Results: []CheckResult{fail}}, Node{State: Drained, Needed: 3, Reason: "probe failed: exit 1", Checks: []string{"probe"}}, false},
		"burn-in pass serves": {Node{State: BurnIn, Needed: 1, Reason: "acceptance checks pending"}, Outcome{Held: true, Results: []CheckResult{other}},
			Node{State: Serving, Since: at, Reason: "passed 1 of 1 acceptance runs in a row"}, true},
		"burn-in fail drains": {Node{State: BurnIn, Needed: 1}, Outcome{Held: true, Results: []CheckResult{fail}},
			Node{State: Drained, Since: at, Needed: 3, Reason: "burn-in: probe failed: exit 1", Checks: []string{"probe"}}, true},
		"aborted changes nothing":  {Node{State: Serving}, Outcome{Aborted: true, Results: []CheckResult{fail}}, Node{State: Serving}, false},
		"external changes nothing": {Node{State: External, Reason: "x"}, Outcome{Held: true, Results: []CheckResult{fail}}, Node{State: External, Reason: "x"}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.rec.Name, tc.want.Name = "gpu-a", "gpu-a"
			tc.rec.Version, tc.want.Version = 5, 5
			got, ev := Apply(tc.rec, tc.o, at, policy)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("record (-want +got)\n%s", diff)
			}
			if (ev != nil) != tc.event {
				t.Fatalf("event %+v, want one: %v", ev, tc.event)
			}
			if ev != nil && (ev.From != tc.rec.State || ev.To != got.State || ev.RunID != tc.o.RunID || ev.Fatal != got.Fatal) {
				t.Errorf("event %+v", ev)
			}
		})
	}
}

func TestReconcile(t *testing.T) {
	held := Node{Name: "gpu-a", State: Drained, Needed: 3, Reason: "probe failed: exit 1"}
	want := DrainReason(held)
	cases := map[string]struct {
		rec      Node
		sn       SlurmNode
		fenced   bool
		checking bool
		want     []Action
	}{
		"held, nothing done yet": {held, SlurmNode{}, false, false,
			[]Action{{ActFence, "gpu-a", ""}, {ActDrain, "gpu-a", want}}},
		"held, converged":                      {held, SlurmNode{Drain: true, Reason: want}, true, false, nil},
		"held, down with our reason is enough": {held, SlurmNode{Down: true, Reason: want}, true, false, nil},
		"held, stale reason": {held, SlurmNode{Drain: true, Reason: "gpubridge: old"}, true, false,
			[]Action{{ActDrain, "gpu-a", want}}},
		"held, resumed outside gpubridge":     {held, SlurmNode{}, true, false, []Action{{ActDrain, "gpu-a", want}}},
		"held, acceptance run waits":          {held, SlurmNode{Drain: true, Reason: want}, true, true, []Action{{ActResume, "gpu-a", ""}}},
		"held, acceptance run waits, resumed": {held, SlurmNode{}, true, true, nil},
		"serving, converged":                  {Node{Name: "gpu-a", State: Serving}, SlurmNode{}, false, false, nil},
		"serving, after requalify": {Node{Name: "gpu-a", State: Serving}, SlurmNode{Drain: true, Reason: want}, true, false,
			[]Action{{ActUnfence, "gpu-a", ""}, {ActResume, "gpu-a", ""}}},
		"serving, a person's drain is not ours": {Node{Name: "gpu-a", State: Serving}, SlurmNode{Drain: true, Reason: "ops"}, false, false, nil},
		"external, never touched":               {Node{Name: "gpu-a", State: External}, SlurmNode{Drain: true, Reason: "ops"}, true, true, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.sn.Name = "gpu-a"
			got := Reconcile(tc.rec, tc.sn, tc.fenced, tc.checking)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestDrainReason(t *testing.T) {
	cases := map[string]struct {
		n    Node
		want string
	}{
		"drained":        {Node{State: Drained, Reason: "probe failed: temp_c=95 > 90 (h100)"}, "gpubridge: probe failed: temp_c=95 > 90 (h100)"},
		"requalify":      {Node{State: Requalify, Passes: 2, Needed: 3, Reason: "probe failed: exit 1"}, "gpubridge: requalifying (2/3 passed) after: probe failed: exit 1"},
		"burn-in":        {Node{State: BurnIn, Needed: 1, Reason: "acceptance checks pending"}, "gpubridge: burn-in (0/1 passed): acceptance checks pending"},
		"burn-in failed": {Node{State: Drained, Reason: "burn-in: xid failed: Xid 79"}, "gpubridge: burn-in: xid failed: Xid 79"},
	}
	for name, tc := range cases {
		if got := DrainReason(tc.n); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
	long := DrainReason(Node{State: Drained, Reason: strings.Repeat("é", 400)})
	if len(long) > MaxReason || !strings.HasPrefix(long, ReasonPrefix) || !strings.HasSuffix(long, "...") {
		t.Errorf("long reason: %d bytes %q", len(long), long)
	}
	if !Ours(long) || Ours("ops: gpubridge: not first") || !Ours("  gpubridge: x") {
		t.Error("Ours")
	}
}
