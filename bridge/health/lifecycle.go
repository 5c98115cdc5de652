package health

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health/check"
)

// State is where a node is in gpubridge's health lifecycle. A node without
// a record is new to gpubridge: the first cycle that sees it starts its
// burn-in.
type State string

const (
	// BurnIn: a node new to gpubridge, held from tenants until its
	// acceptance set passes.
	BurnIn State = "burn-in"
	// Serving: in service; scheduled checks run on it.
	Serving State = "serving"
	// Suspect: in service, but a check warned; the warned checks run
	// again with its next scheduled checks.
	Suspect State = "suspect"
	// Drained: a check failed; held from tenants (DRAIN, or DOWN for a
	// fatal check) until its requalify runs pass.
	Drained State = "drained"
	// Requalify: held, and passing: Passes of Needed in a row so far.
	Requalify State = "requalify"
	// External: drained or down for a reason that is not gpubridge's (a
	// person, or slurmctld itself). gpubridge neither checks, drains nor
	// resumes it; when it comes back it requalifies.
	External State = "external"
)

// States lists every state, in lifecycle order.
var States = []State{BurnIn, Serving, Suspect, Drained, Requalify, External}

// Held reports whether gpubridge keeps the node from tenants in s.
func (s State) Held() bool { return s == BurnIn || s == Drained || s == Requalify }

// InService reports whether tenants' jobs may run on the node in s.
func (s State) InService() bool { return s == Serving || s == Suspect }

// ReasonPrefix starts every node reason gpubridge sets. gpubridge owns the
// drains whose reason starts with "gpubridge:" and never resumes another.
const ReasonPrefix = "gpubridge: "

// Ours reports whether a Slurm node reason is gpubridge's.
func Ours(reason string) bool { return strings.HasPrefix(strings.TrimSpace(reason), "gpubridge:") }

// MaxReason bounds the reasons gpubridge writes into Slurm.
const MaxReason = 250

// Node is gpubridge's record of one node.
type Node struct {
	Name  string    `json:"name"`
	State State     `json:"state"`
	Since time.Time `json:"since"`
	// Passes counts the acceptance runs passed in a row while held;
	// Needed is how many it takes to serve again.
	Passes int `json:"passes"`
	Needed int `json:"needed"`
	// Reason says why the node is held, suspect or external (without the
	// "gpubridge: " prefix).
	Reason string `json:"reason,omitempty"`
	// Checks are the checks that failed (held) or warned (suspect): they
	// join the node's next runs until they pass.
	Checks []string `json:"checks,omitempty"`
	// Fatal: the failure was a fatal check's; the node was stopped (DOWN),
	// killing its jobs.
	Fatal bool `json:"fatal,omitempty"`
	// Version is the store's optimistic lock (0: not stored yet).
	Version int64 `json:"-"`
}

// Event is one change of a node's lifecycle state: the evidence of a drain
// or a resume, and what credits link to.
type Event struct {
	ID     int64     `json:"id"`
	Node   string    `json:"node"`
	At     time.Time `json:"at"`
	From   State     `json:"from"` // "" for a node new to gpubridge
	To     State     `json:"to"`
	Reason string    `json:"reason"`
	RunID  int64     `json:"runId,omitempty"` // the run whose results caused it
	Fatal  bool      `json:"fatal,omitempty"`
	Actor  string    `json:"actor,omitempty"` // a person's override
}

// Policy is how many passes a held node needs.
type Policy struct {
	// AcceptancePasses: passing acceptance runs in a row a new node needs.
	AcceptancePasses int
	// RequalifyPasses: passing runs in a row a drained node (or one back
	// from an outside drain) needs.
	RequalifyPasses int
}

func (p Policy) acceptance() int { return max(1, p.AcceptancePasses) }
func (p Policy) requalify() int  { return max(1, p.RequalifyPasses) }

// GPU is one GPU type of a node.
type GPU struct {
	Type  string
	Count int
}

// SlurmNode is what slurmctld reports about a node.
type SlurmNode struct {
	Name string
	// Drain: the DRAIN flag (draining or drained). Down: DOWN or FAIL.
	Drain, Down bool
	Reason      string
	Partitions  []string
	GPUs        []GPU
	// AllocCPUs and AllocGPUs are in use now (for checks that wait for an
	// idle node).
	AllocCPUs int
	AllocGPUs int
}

// Unavailable reports whether slurmctld starts no new job on the node.
func (n SlurmNode) Unavailable() bool { return n.Drain || n.Down }

// Model is the node's GPU model (its first GPU type), "" without GPUs.
func (n SlurmNode) Model() string {
	if len(n.GPUs) == 0 {
		return ""
	}
	return n.GPUs[0].Type
}

// GPUCount is how many GPUs the node has.
func (n SlurmNode) GPUCount() int {
	c := 0
	for _, g := range n.GPUs {
		c += g.Count
	}
	return c
}

// Idle reports whether nothing runs on the node.
func (n SlurmNode) Idle() bool { return n.AllocCPUs == 0 && n.AllocGPUs == 0 }

// Observe compares a node's record (nil: new to gpubridge) with
// slurmctld's view and returns the record as it must be, with the event
// when the state changes:
//   - drained or down for a reason that is not gpubridge's: External, from
//     any state (gpubridge lets go of it);
//   - new to gpubridge: BurnIn;
//   - External and available again: back from an outside repair, so
//     Requalify.
func Observe(rec *Node, sn SlurmNode, now time.Time, p Policy) (Node, *Event) {
	foreign := sn.Unavailable() && !Ours(sn.Reason)
	switch {
	case foreign && (rec == nil || rec.State != External):
		why := strings.TrimSpace(sn.Reason)
		if why == "" {
			why = "(no reason)"
		}
		n := Node{Name: sn.Name, State: External, Since: now, Reason: "drained outside gpubridge: " + why}
		return transition(rec, n, now, 0)
	case rec == nil:
		n := Node{Name: sn.Name, State: BurnIn, Since: now, Needed: p.acceptance(), Reason: "acceptance checks pending"}
		return transition(rec, n, now, 0)
	case rec.State == External && !foreign:
		n := Node{Name: sn.Name, State: Requalify, Since: now, Needed: p.requalify(), Reason: "back from an outside drain: requalifying"}
		return transition(rec, n, now, 0)
	}
	return *rec, nil
}

// transition builds the new record (keeping the version) and its event.
func transition(rec *Node, n Node, now time.Time, runID int64) (Node, *Event) {
	ev := &Event{Node: n.Name, At: now, To: n.State, Reason: n.Reason, RunID: runID, Fatal: n.Fatal}
	if rec != nil {
		n.Version = rec.Version
		ev.From = rec.State
	}
	return n, ev
}

// CheckResult is one check's result on one node in a finished run.
type CheckResult struct {
	Check  string
	Result check.Result
	Fatal  bool // the check is fatal
}

// Outcome is a finished run as far as one node is concerned.
type Outcome struct {
	RunID int64
	// Held: the run was an acceptance run on a held node (only those move
	// a held node).
	Held bool
	// Aborted: the run gave no verdict (its job was cancelled, or never
	// started): the lifecycle does not move.
	Aborted bool
	Results []CheckResult
}

// Apply folds a finished run into a node's record and returns the record
// as it must be, with an event when the state changes:
//   - in service: a fail drains (Drained, RequalifyPasses needed), a warn
//     makes it Suspect; a Suspect node whose warned checks all pass serves
//     again;
//   - held: only acceptance runs count. All pass: one more pass, and at
//     Needed passes in a row it serves again; a warn or a fail resets the
//     count (Drained) and names the check;
//   - External: nothing (gpubridge does not judge a node it let go of).
func Apply(rec Node, o Outcome, now time.Time, p Policy) (Node, *Event) {
	if o.Aborted || rec.State == External || len(o.Results) == 0 {
		return rec, nil
	}
	worst := check.Pass
	var failing, warned []CheckResult
	for _, r := range o.Results {
		worst = worst.Worse(r.Result.Verdict)
		switch r.Result.Verdict {
		case check.Pass:
		case check.Warn:
			warned = append(warned, r)
		default:
			failing = append(failing, r)
		}
	}
	switch {
	case rec.State.Held():
		if !o.Held {
			return rec, nil // a run submitted before the node was held: evidence only
		}
		if worst == check.Pass {
			n := rec
			n.Passes++
			if n.Passes >= n.Needed {
				served := Node{Name: rec.Name, State: Serving, Since: now,
					Reason: fmt.Sprintf("passed %d of %d acceptance runs in a row", n.Passes, n.Needed)}
				return transition(&rec, served, now, o.RunID)
			}
			if n.State == Drained {
				n.State, n.Since = Requalify, now
				return transition(&rec, n, now, o.RunID)
			}
			return n, nil
		}
		bad := append(failing, warned...)
		n := rec
		n.Passes = 0
		n.Reason = failReason(bad)
		n.Checks = union(rec.Checks, names(bad))
		n.Fatal = rec.Fatal || anyFatal(failing)
		if rec.State == BurnIn {
			n.Reason = "burn-in: " + n.Reason
		}
		if n.State != Drained {
			n.State, n.Since, n.Needed = Drained, now, p.requalify()
		}
		if n.State != rec.State || n.Reason != rec.Reason {
			_, ev := transition(&rec, n, now, o.RunID)
			return n, ev
		}
		return n, nil
	case len(failing) > 0:
		n := Node{Name: rec.Name, State: Drained, Since: now, Needed: p.requalify(), Reason: failReason(failing),
			Checks: names(failing), Fatal: anyFatal(failing)}
		return transition(&rec, n, now, o.RunID)
	case len(warned) > 0:
		n := Node{Name: rec.Name, State: Suspect, Since: now, Reason: failReason(warned), Checks: union(rec.Checks, names(warned))}
		if rec.State == Suspect {
			n.Since = rec.Since
		}
		if rec.State == Suspect && n.Reason == rec.Reason && slices.Equal(n.Checks, rec.Checks) {
			return rec, nil
		}
		return transition(&rec, n, now, o.RunID)
	case rec.State == Suspect:
		passed := names(o.Results)
		for _, c := range rec.Checks {
			if !slices.Contains(passed, c) {
				return rec, nil // not every warned check has run again
			}
		}
		n := Node{Name: rec.Name, State: Serving, Since: now, Reason: "the checks that warned pass again"}
		return transition(&rec, n, now, o.RunID)
	}
	return rec, nil
}

func failReason(rs []CheckResult) string {
	var parts []string
	for _, r := range rs {
		verb := "failed"
		if r.Result.Verdict == check.Warn {
			verb = "warned"
		}
		s := r.Check + " " + verb
		if r.Result.Reason != "" {
			s += ": " + r.Result.Reason
		}
		parts = append(parts, s)
	}
	return clipReason(strings.Join(parts, "; "))
}

func clipReason(s string) string {
	s = strings.Join(strings.Fields(s), " ") // one line
	if len(s) <= MaxReason-len(ReasonPrefix)-24 {
		return s
	}
	cut := MaxReason - len(ReasonPrefix) - 27
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}

func names(rs []CheckResult) []string {
	var out []string
	for _, r := range rs {
		if !slices.Contains(out, r.Check) {
			out = append(out, r.Check)
		}
	}
	return out
}

func anyFatal(rs []CheckResult) bool {
	return slices.ContainsFunc(rs, func(r CheckResult) bool { return r.Fatal })
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// DrainReason is the Slurm node reason of a held node: "gpubridge: ...",
// with the requalify progress.
func DrainReason(n Node) string {
	var s string
	switch n.State {
	case BurnIn:
		s = fmt.Sprintf("burn-in (%d/%d passed): %s", n.Passes, n.Needed, strings.TrimPrefix(n.Reason, "burn-in: "))
	case Requalify:
		s = fmt.Sprintf("requalifying (%d/%d passed) after: %s", n.Passes, n.Needed, n.Reason)
	default:
		s = n.Reason
	}
	s = ReasonPrefix + s
	if len(s) > MaxReason {
		cut := MaxReason - 3
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// ActionKind is what the service does to a node in Slurm.
type ActionKind string

const (
	ActFence   ActionKind = "fence"   // create the node's health reservation
	ActUnfence ActionKind = "unfence" // delete it
	ActDrain   ActionKind = "drain"   // DRAIN with Reason (running jobs finish)
	ActDown    ActionKind = "down"    // DOWN with Reason (running jobs are killed)
	ActResume  ActionKind = "resume"  // RESUME (only gpubridge's own drains)
)

// Action is one change to a node in Slurm.
type Action struct {
	Kind   ActionKind `json:"kind"`
	Node   string     `json:"node"`
	Reason string     `json:"reason,omitempty"`
}

// Reconcile returns what makes slurmctld match a node's record (level
// triggered: the same inputs give the same actions, and none once they
// match). fenced says whether the node's health reservation exists;
// checking says whether an acceptance run waits to start on the held node
// (it is resumed, behind its reservation, until the run's job starts).
//   - External: nothing, ever.
//   - held: fenced, and drained with DrainReason; or, while an acceptance
//     run waits to start, resumed (only from gpubridge's own drain).
//   - in service: not fenced, and not drained by gpubridge.
func Reconcile(rec Node, sn SlurmNode, fenced, checking bool) []Action {
	var acts []Action
	switch {
	case rec.State == External:
		return nil
	case rec.State.Held():
		if !fenced {
			acts = append(acts, Action{Kind: ActFence, Node: rec.Name})
		}
		if checking {
			if sn.Unavailable() && Ours(sn.Reason) {
				acts = append(acts, Action{Kind: ActResume, Node: rec.Name})
			}
			return acts
		}
		want := DrainReason(rec)
		if !sn.Unavailable() || strings.TrimSpace(sn.Reason) != want {
			acts = append(acts, Action{Kind: ActDrain, Node: rec.Name, Reason: want})
		}
	case rec.State.InService():
		if fenced {
			acts = append(acts, Action{Kind: ActUnfence, Node: rec.Name})
		}
		if sn.Unavailable() && Ours(sn.Reason) {
			acts = append(acts, Action{Kind: ActResume, Node: rec.Name})
		}
	}
	return acts
}
