package health

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health/check"
)

// harvest finishes every in-flight run whose job ended.
func (s *Service) harvest(ctx context.Context, st *snapshot, rep *Report) {
	var still []Run
	for _, r := range st.inflight {
		done, err := s.harvestRun(ctx, st, r, rep)
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("run %d on %s: %v", r.ID, r.Node, err))
		}
		if !done {
			still = append(still, r)
		}
	}
	st.inflight = still
}

// submitGrace is how long a run may stay "submitting" before a cycle looks
// for its job (another process may be submitting it right now).
const submitGrace = time.Minute

// harvestRun finishes run r when its job has ended: its output is judged,
// the results stored and the records of its nodes moved on. done is false
// while the run stays in flight (its job not found yet within the grace,
// or still active).
func (s *Service) harvestRun(ctx context.Context, st *snapshot, r Run, rep *Report) (done bool, err error) {
	now := s.now()
	if r.JobID == 0 {
		if now.Sub(r.RequestedAt) < submitGrace {
			return false, nil
		}
		found, err := s.findJob(ctx, st, &r)
		if err != nil {
			return false, err
		}
		if !found {
			return s.abort(ctx, r, "its job was never submitted", rep)
		}
	}
	js, known := st.jobs[r.JobID]
	if known && js.Active() {
		return s.awaitJob(ctx, r, js, now, rep)
	}
	checks, err := s.Catalog.Resolve(r.Checks)
	if err != nil {
		return s.abort(ctx, r, "its checks are no longer defined: "+err.Error(), rep)
	}
	out, why, err := s.readOutput(ctx, r, js, known, rep)
	if err != nil {
		return false, err
	}
	if why != "" {
		return s.abort(ctx, r, why, rep)
	}
	fin, nexts := s.judgeRun(st, r, checks, out, known && js.State == "CANCELLED", now)
	return s.finish(ctx, fin, nexts, rep)
}

// awaitJob keeps run r in flight while its job (state js) is active, but
// cancels a job pending past health.maxPending and aborts the run.
func (s *Service) awaitJob(ctx context.Context, r Run, js JobState, now time.Time, rep *Report) (bool, error) {
	if !js.Pending() || now.Sub(r.RequestedAt) <= s.Settings.MaxPending {
		return false, nil
	}
	if err := s.Jobs.Cancel(ctx, r.JobID); err != nil {
		return false, fmt.Errorf("cancel job %d pending since %s: %w", r.JobID, r.RequestedAt.Format(time.RFC3339), err)
	}
	return s.abort(ctx, r, fmt.Sprintf("its job %d did not start within %s", r.JobID, s.Settings.MaxPending), rep)
}

// finish stores the judged run fin (unless another process finished it
// first), removes its output file, reports it, and stops the nodes a
// fatal check drained (nexts are the nodes' next records).
func (s *Service) finish(ctx context.Context, fin Finish, nexts map[string]Node, rep *Report) (bool, error) {
	won, err := s.Store.FinishRun(ctx, fin)
	if err != nil {
		return false, err
	}
	if !won {
		return true, nil // another process finished it
	}
	r := fin.Run
	if err := s.Outputs.Remove(ctx, r.Key); err != nil {
		s.Logger.Warn("health: output file not removed", "run", r.ID, "key", r.Key, "error", err)
	}
	s.reportFinished(fin, rep)
	return true, s.stopFatal(ctx, fin, nexts, rep)
}

// findJob looks for the job of run r, still "submitting" past the grace
// (its submitter may have died after sbatch): found, the job is recorded
// on r and in the store, and its state read into st.
func (s *Service) findJob(ctx context.Context, st *snapshot, r *Run) (bool, error) {
	id, ok, err := s.Jobs.Find(ctx, r.Key)
	if err != nil || !ok {
		return false, err
	}
	if err := s.Store.SetRunJob(ctx, r.ID, id); err != nil {
		return false, err
	}
	r.JobID, r.State = id, RunSubmitted
	js, err := s.Jobs.States(ctx, []int64{id})
	if err != nil {
		return false, err
	}
	maps(st.jobs, js)
	return true, nil
}

// readOutput reads the output file of run r, whose job (state js, when
// known) has ended. Without a file fit to judge, why is the reason to
// abort the run (and what the admin must know goes to rep).
func (s *Service) readOutput(ctx context.Context, r Run, js JobState, known bool, rep *Report) (out []byte, why string, err error) {
	out, err = s.Outputs.Read(ctx, r.Key, s.Settings.MaxOutput)
	if errors.Is(err, ErrNoOutput) {
		// Without the file there is no verdict: a job cancelled before it
		// started, or an output directory gpubridge cannot see (which would
		// otherwise drain every node).
		if known && js.State == "CANCELLED" {
			return nil, fmt.Sprintf("its job %d was cancelled before it started", r.JobID), nil
		}
		state := "forgotten by slurmctld"
		if known {
			state = js.State
		}
		rep.Errors = append(rep.Errors, fmt.Sprintf("run %d on %s: no output file %s (job %d %s)", r.ID, r.Node, s.Outputs.Path(r.Key), r.JobID, state))
		return nil, fmt.Sprintf("no output file %s (job %s): is health.outputDir shared with gpubridge?", s.Outputs.Path(r.Key), state), nil
	}
	if errors.Is(err, ErrBadOutput) {
		// Someone put another file in its place: no verdict, and the
		// admin is told (never read through a link, never drained on it).
		rep.Errors = append(rep.Errors, fmt.Sprintf("run %d on %s: %v", r.ID, r.Node, err))
		return nil, err.Error(), nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read output: %w", err)
	}
	return out, "", nil
}

// judgeRun is the finish of run r from its output: each check's result
// for each of its nodes, and the next record of each node (nexts, by
// name). A job cancelled (jobCancelled) before its checks finished aborts
// the run, and its unfinished checks say so.
func (s *Service) judgeRun(st *snapshot, r Run, checks []check.Check, out []byte, jobCancelled bool, now time.Time) (Finish, map[string]Node) {
	script := check.Script{Key: r.Key, Checks: checks, Model: r.Model, GPUs: r.GPUs}
	outcomes := script.Evaluate(out)
	complete := true
	for _, o := range outcomes {
		complete = complete && o.ExitCode >= 0
	}
	fin := Finish{Run: r, Evidence: capEvidence(out, s.Settings.MaxEvidence)}
	fin.Run.State, fin.Run.FinishedAt = RunDone, now
	cancelled := jobCancelled && !complete
	if cancelled {
		fin.Run.State, fin.Run.Note = RunAborted, "its job was cancelled before the checks finished"
	}
	var crs []CheckResult
	for i, o := range outcomes {
		res := o.Result
		if cancelled && res.Verdict == check.Fail && o.ExitCode < 0 {
			res.Reason = "not finished: the check job was cancelled"
		}
		for _, node := range r.AllNodes() { // a two-node check's result is each node's
			fin.Results = append(fin.Results, StoredResult{RunID: r.ID, Node: node, Check: o.Check, Verdict: res.Verdict,
				Reason: res.Reason, Values: res.Values, Start: o.Start, End: o.End, ExitCode: o.ExitCode, JobID: r.JobID,
				Tenant: r.Tenant, Purpose: r.Purpose, At: now})
		}
		crs = append(crs, CheckResult{Check: o.Check, Result: res, Fatal: checks[i].Fatal})
	}
	nexts := s.applyRun(st, r, Outcome{RunID: r.ID, Held: r.Held, Aborted: cancelled, Results: crs}, &fin, now)
	return fin, nexts
}

// applyRun moves the record of each node of run r on by its outcome oc:
// the records that changed and their state changes go into fin; nexts are
// the next records, by node.
func (s *Service) applyRun(st *snapshot, r Run, oc Outcome, fin *Finish, now time.Time) map[string]Node {
	nexts := map[string]Node{}
	for _, node := range r.AllNodes() {
		rec, ok := st.recs[node]
		if !ok {
			continue
		}
		next, ev := Apply(rec, oc, now, s.Settings.Policy)
		if ev != nil || !sameRecord(next, rec) {
			fin.Nodes = append(fin.Nodes, next)
		}
		if ev != nil {
			ev.Node = node
			fin.Events = append(fin.Events, *ev)
		}
		nexts[node] = next
	}
	return nexts
}

// reportFinished tells rep, the log and the observer about a finished
// run: its state changes, and each check's verdict once.
func (s *Service) reportFinished(fin Finish, rep *Report) {
	rep.Finished = append(rep.Finished, fin.Run)
	for _, ev := range fin.Events {
		rep.Events = append(rep.Events, ev)
		s.Logger.Info("health: node state", "node", ev.Node, "from", ev.From, "to", ev.To, "reason", ev.Reason, "run", fin.Run.ID)
	}
	if s.Observer != nil {
		for _, res := range fin.Results {
			if res.Node == fin.Run.Node { // once per check, not per node
				s.Observer.CheckResult(res.Check, res.Verdict, res.Duration())
			}
		}
	}
}

// stopFatal stops (DOWN) each node a fatal check just drained out of
// service, with the reason of its next record (nexts).
func (s *Service) stopFatal(ctx context.Context, fin Finish, nexts map[string]Node, rep *Report) error {
	for _, ev := range fin.Events {
		if ev.Fatal && ev.To == Drained && ev.From.InService() {
			// A fatal failure stops the node now: its jobs are killed.
			// Later cycles hold it with DRAIN like any other.
			reason := DrainReason(nexts[ev.Node])
			if err := s.Nodes.Down(ctx, ev.Node, reason); err != nil {
				return fmt.Errorf("stop %s after a fatal check: %w", ev.Node, err)
			}
			rep.Actions = append(rep.Actions, Action{Kind: ActDown, Node: ev.Node, Reason: reason})
		}
	}
	return nil
}

func sameRecord(a, b Node) bool {
	return a.State == b.State && a.Passes == b.Passes && a.Needed == b.Needed && a.Reason == b.Reason &&
		slices.Equal(a.Checks, b.Checks) && a.Fatal == b.Fatal && a.Since.Equal(b.Since)
}

func (s *Service) abort(ctx context.Context, r Run, note string, rep *Report) (bool, error) {
	fin := Finish{Run: r}
	fin.Run.State, fin.Run.FinishedAt, fin.Run.Note = RunAborted, s.now(), note
	won, err := s.Store.FinishRun(ctx, fin)
	if err != nil {
		return false, err
	}
	if won {
		rep.Finished = append(rep.Finished, fin.Run)
		s.Logger.Warn("health: run aborted", "run", r.ID, "node", r.Node, "why", note)
	}
	return true, nil
}

// capEvidence keeps the head and tail of a long output.
func capEvidence(out []byte, n int) []byte {
	if len(out) <= n {
		return out
	}
	const mark = "\n... [output cut: %d bytes left out] ...\n"
	head := n / 4
	tail := n - head - len(mark) - 20
	cut := fmt.Sprintf(mark, len(out)-head-tail)
	res := append([]byte{}, out[:head]...)
	res = append(res, cut...)
	return append(res, out[len(out)-tail:]...)
}
