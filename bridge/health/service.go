package health

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health/check"
)

// Schedule is a set of checks the daemon runs on a cron spec.
type Schedule struct {
	Name   string
	Spec   string // robfig/cron/v3 spec, e.g. "@every 10m", "0 4 * * 0"
	Checks []string
	// WhenIdle: only on nodes where nothing runs (long, exclusive checks).
	WhenIdle bool
}

// AcceptanceSchedule is the name of the schedule that runs the acceptance
// set on held nodes (burn-in and requalify).
const AcceptanceSchedule = "acceptance"

// Settings configure the service.
type Settings struct {
	// Nodes are the nodes whose health gpubridge manages. Others are never
	// touched.
	Nodes []string
	// Account, User, QOS and Partition of the check jobs: a service account
	// that is no tenant's (its jobs are billed to nobody). An empty
	// Partition takes the node's first partition.
	Account, User, QOS, Partition string
	// MaxConcurrent caps the check jobs in flight at once.
	MaxConcurrent int
	Policy        Policy
	// Acceptance is the set a held node must pass (its Spec drives the
	// acceptance runs); a drained node runs it with the checks that failed.
	Acceptance Schedule
	Schedules  []Schedule
	// TriggerChecks are what `check node` runs without check= (default:
	// the acceptance set).
	TriggerChecks []string
	// TenantChecksPerHour caps the checks a tenant triggers per hour.
	TenantChecksPerHour int
	// StartWait: how long a cycle waits for an acceptance run's job to
	// start before it drains the node again (the node is resumed, behind
	// its reservation, while the job waits).
	StartWait time.Duration
	// MaxPending: a run whose job has not started after this is cancelled
	// (no verdict).
	MaxPending time.Duration
	// Retention: finished runs, results and evidence older than this are
	// deleted.
	Retention time.Duration
	// MaxOutput bounds the output read back per run; MaxEvidence what is
	// stored of it.
	MaxOutput   int64
	MaxEvidence int
}

func (s Settings) withDefaults() Settings {
	if s.MaxConcurrent <= 0 {
		s.MaxConcurrent = 4
	}
	if s.StartWait <= 0 {
		s.StartWait = 2 * time.Minute
	}
	if s.MaxPending <= 0 {
		s.MaxPending = time.Hour
	}
	if s.MaxOutput <= 0 {
		s.MaxOutput = 16 << 20
	}
	if s.MaxEvidence <= 0 {
		s.MaxEvidence = 256 << 10
	}
	if s.Acceptance.Name == "" {
		s.Acceptance.Name = AcceptanceSchedule
	}
	if len(s.TriggerChecks) == 0 {
		s.TriggerChecks = s.Acceptance.Checks
	}
	if s.TenantChecksPerHour <= 0 {
		s.TenantChecksPerHour = 4
	}
	return s
}

// Params are what a Service is built from.
type Params struct {
	Nodes   NodeControl
	Jobs    JobRunner
	Outputs Outputs
	Store   Store
	Usage   TenantUsage
	// History says where a tenant's jobs ran (show health tenant= history).
	History  TenantHistory
	Bookings Bookings
	Catalog  check.Catalog
	Settings Settings
	Logger   *slog.Logger
	Observer Observer
	// Mover re-projects bookings on the nodes a cycle held or released
	// (nil: the bookings job finds them at its next run).
	Mover BookingMover
	// Now is the clock (tests inject one); default time.Now.
	Now func() time.Time
	// Sleep waits between polls; default a timer that honours ctx.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Service runs the health lifecycle: schedules, acceptance runs, tenant
// and admin checks, and the admin override. Its methods are safe for
// concurrent use within a process; across processes (daemon and CLI) the
// store's compare-and-set keeps records consistent.
type Service struct {
	Params
	mu sync.Mutex
	// again are the nodes returned to service, with when: the first cycle
	// or harvest releaseSettle after that re-projects their bookings once
	// more (slurmctld was seen to report a node resumed and unfenced a
	// moment ago as still unavailable to the projectors that ran within
	// the next 20 ms; one a second later moved the booking back).
	again map[string]time.Time
}

// releaseSettle is how long after a node's return to service its bookings
// are re-projected a second time.
const releaseSettle = 5 * time.Second

// New returns a service; it validates the settings against the catalog.
func New(p Params) (*Service, error) {
	svc := &Service{Params: p}
	svc.Settings = svc.Settings.withDefaults()
	if svc.Bookings == nil {
		svc.Bookings = NoBookings{}
	}
	if svc.Logger == nil {
		svc.Logger = slog.New(slog.DiscardHandler)
	}
	if err := svc.validate(); err != nil {
		return nil, err
	}
	return svc, nil
}

func (s *Service) validate() error {
	var errs []string
	if s.Nodes == nil || s.Jobs == nil || s.Outputs == nil || s.Store == nil || s.Catalog == nil {
		errs = append(errs, "the service needs Nodes, Jobs, Outputs, Store and Catalog")
	}
	if s.Settings.Account == "" || s.Settings.User == "" {
		errs = append(errs, "health.account and health.user name the check jobs' service account")
	}
	sets := append([]Schedule{s.Settings.Acceptance}, s.Settings.Schedules...)
	seen := map[string]bool{}
	for _, sc := range sets {
		if seen[sc.Name] {
			errs = append(errs, fmt.Sprintf("schedule %q is defined twice", sc.Name))
		}
		seen[sc.Name] = true
		if _, err := s.Catalog.Resolve(sc.Checks); err != nil {
			errs = append(errs, fmt.Sprintf("schedule %s: %v", sc.Name, err))
		}
		if len(sc.Checks) == 0 && sc.Name == AcceptanceSchedule {
			errs = append(errs, "the acceptance schedule needs at least one check (health.acceptance.checks)")
		}
		for _, c := range sc.Checks {
			if ch, ok := s.Catalog[c]; ok && ch.Nodes > 1 {
				errs = append(errs, fmt.Sprintf("schedule %s: %s spans %d nodes; schedules run single-node checks (trigger two-node checks by hand)", sc.Name, c, ch.Nodes))
			}
		}
	}
	if _, err := s.Catalog.Resolve(s.Settings.TriggerChecks); err != nil {
		errs = append(errs, "health.triggerChecks: "+err.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(errs, "; "))
	}
	return nil
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Service) sleep(ctx context.Context, d time.Duration) error {
	if s.Sleep != nil {
		return s.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (s *Service) managed(node string) bool { return slices.Contains(s.Settings.Nodes, node) }

// ScheduleJob is the daemon's periodic job of one schedule: it satisfies
// cmd/gpubridge/daemon.Job (Name, Run).
type ScheduleJob struct {
	svc      *Service
	schedule string
}

// Name is "health-<schedule>".
func (j *ScheduleJob) Name() string { return "health-" + j.schedule }

// Run runs one cycle of the schedule.
func (j *ScheduleJob) Run(ctx context.Context) error {
	_, err := j.svc.Cycle(ctx, j.schedule)
	return err
}

// ScheduledJob is a job with its cron spec, for the daemon to schedule.
type ScheduledJob struct {
	Spec string
	Job  *ScheduleJob
}

// Scheduled returns one job per schedule (the acceptance schedule first). The
// daemon schedules each on its Spec with SkipIfStillRunning; an empty Spec
// disables that schedule.
func (s *Service) Scheduled() []ScheduledJob {
	out := []ScheduledJob{{Spec: s.Settings.Acceptance.Spec, Job: &ScheduleJob{svc: s, schedule: s.Settings.Acceptance.Name}}}
	for _, sc := range s.Settings.Schedules {
		out = append(out, ScheduledJob{Spec: sc.Spec, Job: &ScheduleJob{svc: s, schedule: sc.Name}})
	}
	return out
}

// Job returns the job of the named schedule.
func (s *Service) Job(schedule string) (*ScheduleJob, error) {
	if _, err := s.schedule(schedule); err != nil {
		return nil, err
	}
	return &ScheduleJob{svc: s, schedule: schedule}, nil
}

func (s *Service) schedule(name string) (Schedule, error) {
	if name == s.Settings.Acceptance.Name {
		return s.Settings.Acceptance, nil
	}
	for _, sc := range s.Settings.Schedules {
		if sc.Name == name {
			return sc, nil
		}
	}
	var names []string
	for _, sc := range append([]Schedule{s.Settings.Acceptance}, s.Settings.Schedules...) {
		names = append(names, sc.Name)
	}
	return Schedule{}, fmt.Errorf("%w: no health schedule %q (schedules: %s)", ErrInvalid, name, strings.Join(names, ", "))
}

// Report is what one cycle did.
type Report struct {
	Schedule  string    `json:"schedule"`
	At        time.Time `json:"at"`
	Finished  []Run     `json:"finished,omitempty"`
	Submitted []Run     `json:"submitted,omitempty"`
	Events    []Event   `json:"events,omitempty"`
	Actions   []Action  `json:"actions,omitempty"`
	// Skipped says why nodes got no run this cycle (node: why).
	Skipped map[string]string `json:"skipped,omitempty"`
	Pruned  int64             `json:"pruned,omitempty"`
	// Bookings are what the booking projector did after nodes were held
	// or released (Mover), one line per booking.
	Bookings []string `json:"bookings,omitempty"`
	Errors   []string `json:"errors,omitempty"`
}

func (r *Report) skip(node, why string) {
	if r.Skipped == nil {
		r.Skipped = map[string]string{}
	}
	r.Skipped[node] = why
}

// snapshot is one cycle's reading of Slurm and the store.
type snapshot struct {
	slurm    map[string]SlurmNode // managed nodes slurmctld knows
	fences   map[string]bool
	recs     map[string]Node
	inflight []Run
	jobs     map[int64]JobState
}

func (s *Service) load(ctx context.Context) (*snapshot, error) {
	all, err := s.Nodes.Nodes(ctx)
	if err != nil {
		return nil, fmt.Errorf("read nodes: %w", err)
	}
	st := &snapshot{slurm: map[string]SlurmNode{}}
	for _, n := range all {
		if s.managed(n.Name) {
			st.slurm[n.Name] = n
		}
	}
	if st.fences, err = s.Nodes.Fences(ctx); err != nil {
		return nil, fmt.Errorf("read health reservations: %w", err)
	}
	if st.recs, err = s.Store.Nodes(ctx); err != nil {
		return nil, err
	}
	if err := s.loadRuns(ctx, st); err != nil {
		return nil, err
	}
	return st, nil
}

func (s *Service) loadRuns(ctx context.Context, st *snapshot) error {
	var err error
	if st.inflight, err = s.Store.InFlight(ctx); err != nil {
		return err
	}
	var ids []int64
	for _, r := range st.inflight {
		if r.JobID > 0 {
			ids = append(ids, r.JobID)
		}
	}
	st.jobs = map[int64]JobState{}
	if len(ids) > 0 {
		if st.jobs, err = s.Jobs.States(ctx, ids); err != nil {
			return fmt.Errorf("read check jobs: %w", err)
		}
	}
	return nil
}

// runOn returns the run in flight on node.
func (st *snapshot) runOn(node string) (Run, bool) {
	for _, r := range st.inflight {
		if slices.Contains(r.AllNodes(), node) {
			return r, true
		}
	}
	return Run{}, false
}

// checking reports whether an acceptance run waits to start on node.
func (st *snapshot) checking(node string) bool {
	r, ok := st.runOn(node)
	if !ok || !r.Held {
		return false
	}
	if r.JobID == 0 {
		return true
	}
	js, known := st.jobs[r.JobID]
	return known && js.Pending()
}

// Cycle runs one cycle of a schedule: it harvests finished runs, moves the
// lifecycle, makes Slurm match the records, submits the schedule's checks
// (acceptance runs on held nodes, or the schedule's checks on nodes in
// service) within the cap, and prunes old evidence. Errors on one node do
// not stop the others; they are returned together at the end.
func (s *Service) Cycle(ctx context.Context, schedule string) (Report, error) {
	sched, err := s.schedule(schedule)
	if err != nil {
		return Report{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rep := Report{Schedule: sched.Name, At: s.now()}
	st, err := s.load(ctx)
	if err != nil {
		return rep, err
	}
	s.harvest(ctx, st, &rep)
	if st.recs, err = s.Store.Nodes(ctx); err != nil {
		return rep, err
	}
	s.observe(ctx, st, &rep)
	s.reconcile(ctx, st, &rep, nil)
	s.submitSchedule(ctx, st, sched, &rep)
	s.settle(ctx, st, &rep)
	s.reproject(ctx, &rep)
	if s.Settings.Retention > 0 {
		n, err := s.Store.Prune(ctx, rep.At.Add(-s.Settings.Retention))
		if err != nil {
			rep.Errors = append(rep.Errors, err.Error())
		}
		rep.Pruned = n
	}
	s.observeStates(st)
	if len(rep.Errors) > 0 {
		return rep, fmt.Errorf("health cycle %s: %s", sched.Name, strings.Join(rep.Errors, "; "))
	}
	return rep, nil
}

// Harvest finishes the runs whose jobs ended and moves the lifecycle,
// without submitting anything (the CLI's wait).
func (s *Service) Harvest(ctx context.Context) (Report, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rep := Report{Schedule: "harvest", At: s.now()}
	st, err := s.load(ctx)
	if err != nil {
		return rep, err
	}
	s.harvest(ctx, st, &rep)
	if st.recs, err = s.Store.Nodes(ctx); err != nil {
		return rep, err
	}
	s.observe(ctx, st, &rep)
	s.reconcile(ctx, st, &rep, nil)
	s.reproject(ctx, &rep)
	s.observeStates(st)
	if len(rep.Errors) > 0 {
		return rep, fmt.Errorf("health harvest: %s", strings.Join(rep.Errors, "; "))
	}
	return rep, nil
}

// servesTenants reports whether a node in state st takes tenants' jobs
// (a node without a record did, before gpubridge managed it).
func servesTenants(st State) bool { return st == "" || st.InService() }

// reproject hands the nodes whose service changed in this report (held,
// released, taken over by a person) to the Mover, after Slurm has been
// changed, so that bookings on them are marked at risk or moved now; a
// node returned to service goes along once more releaseSettle later.
func (s *Service) reproject(ctx context.Context, rep *Report) {
	if s.Mover == nil {
		return
	}
	now := s.now()
	var nodes []string
	for n, at := range s.again {
		if !now.Before(at.Add(releaseSettle)) {
			nodes = append(nodes, n)
			delete(s.again, n)
		}
	}
	for _, e := range rep.Events {
		if servesTenants(e.From) != servesTenants(e.To) && !slices.Contains(nodes, e.Node) {
			nodes = append(nodes, e.Node)
		}
		if !servesTenants(e.From) && servesTenants(e.To) {
			if s.again == nil {
				s.again = map[string]time.Time{}
			}
			s.again[e.Node] = now
		} else {
			delete(s.again, e.Node)
		}
	}
	if len(nodes) == 0 {
		return
	}
	slices.Sort(nodes)
	lines, err := s.Mover.Reproject(ctx, nodes)
	rep.Bookings = append(rep.Bookings, lines...)
	s.Logger.Info("health: bookings re-projected", "nodes", strings.Join(nodes, ","), "did", strings.Join(lines, "; "), "error", err)
	if err != nil {
		rep.Errors = append(rep.Errors, fmt.Sprintf("bookings on %s: %v", strings.Join(nodes, ","), err))
	}
}

func (s *Service) observeStates(st *snapshot) {
	if s.Observer == nil {
		return
	}
	counts := map[State]int{}
	for name, r := range st.recs {
		if s.managed(name) {
			counts[r.State]++
		}
	}
	s.Observer.NodeStates(counts)
}

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

func maps(dst, src map[int64]JobState) {
	for k, v := range src {
		dst[k] = v
	}
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

// observe moves records by what slurmctld reports (new nodes, outside
// drains, nodes back from them).
func (s *Service) observe(ctx context.Context, st *snapshot, rep *Report) {
	for _, name := range sortedKeys(st.slurm) {
		sn := st.slurm[name]
		var rec *Node
		if r, ok := st.recs[name]; ok {
			rec = &r
		}
		next, ev := Observe(rec, sn, s.now(), s.Settings.Policy)
		if ev == nil {
			continue
		}
		stored, err := s.Store.PutNode(ctx, next, ev)
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		st.recs[name] = stored
		rep.Events = append(rep.Events, *ev)
		s.Logger.Info("health: node state", "node", name, "from", ev.From, "to", ev.To, "reason", ev.Reason)
	}
}

// reconcile makes Slurm match the records of the nodes (all managed nodes
// when only is nil).
func (s *Service) reconcile(ctx context.Context, st *snapshot, rep *Report, only []string) {
	for _, name := range sortedKeys(st.slurm) {
		if only != nil && !slices.Contains(only, name) {
			continue
		}
		rec, ok := st.recs[name]
		if !ok {
			continue
		}
		sn := st.slurm[name]
		for _, a := range Reconcile(rec, sn, st.fences[name], st.checking(name)) {
			if err := s.act(ctx, a); err != nil {
				rep.Errors = append(rep.Errors, fmt.Sprintf("%s %s: %v", a.Kind, name, err))
				break // the later actions depend on this one
			}
			rep.Actions = append(rep.Actions, a)
			switch a.Kind {
			case ActFence:
				st.fences[name] = true
			case ActUnfence:
				delete(st.fences, name)
			case ActDrain:
				sn.Drain, sn.Reason = true, a.Reason
			case ActResume:
				sn.Drain, sn.Down, sn.Reason = false, false, ""
			}
			st.slurm[name] = sn
		}
	}
}

func (s *Service) act(ctx context.Context, a Action) error {
	s.Logger.Info("health: slurm", "action", a.Kind, "node", a.Node, "reason", a.Reason)
	switch a.Kind {
	case ActFence:
		return s.Nodes.Fence(ctx, a.Node)
	case ActUnfence:
		return s.Nodes.Unfence(ctx, a.Node)
	case ActDrain:
		return s.Nodes.Drain(ctx, a.Node, a.Reason)
	case ActDown:
		return s.Nodes.Down(ctx, a.Node, a.Reason)
	case ActResume:
		return s.Nodes.Resume(ctx, a.Node)
	}
	return fmt.Errorf("unknown action %q", a.Kind)
}

// activeRuns counts the runs in flight whose jobs have not ended.
func (st *snapshot) activeRuns() int { return len(st.inflight) }

// submitSchedule submits the schedule's runs.
func (s *Service) submitSchedule(ctx context.Context, st *snapshot, sched Schedule, rep *Report) {
	for _, name := range sortedKeys(st.slurm) {
		rec, ok := st.recs[name]
		if !ok {
			continue
		}
		sn := st.slurm[name]
		acceptance := sched.Name == s.Settings.Acceptance.Name
		switch {
		case acceptance && !rec.State.Held(), !acceptance && !rec.State.InService():
			continue
		}
		if r, busy := st.runOn(name); busy {
			rep.skip(name, fmt.Sprintf("run %d is in flight", r.ID))
			continue
		}
		if sched.WhenIdle && !sn.Idle() {
			rep.skip(name, "not idle")
			continue
		}
		if st.activeRuns() >= s.Settings.MaxConcurrent {
			rep.skip(name, fmt.Sprintf("%d check jobs are in flight (health.maxConcurrent)", st.activeRuns()))
			continue
		}
		names := sched.Checks
		purpose := PurposeSchedule
		if acceptance || rec.State == Suspect {
			names = union(sched.Checks, rec.Checks)
		}
		if acceptance {
			purpose = PurposeAcceptance
		}
		r, err := s.submit(ctx, st, sn, names, purpose, sched.Name, acceptance, "", "")
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("submit on %s: %v", name, err))
			continue
		}
		rep.Submitted = append(rep.Submitted, r)
	}
}

// submit stores and submits one run on a node.
func (s *Service) submit(ctx context.Context, st *snapshot, sn SlurmNode, names []string, p Purpose, schedule string, held bool, tenant, actor string, peers ...SlurmNode) (Run, error) {
	checks, err := s.Catalog.Resolve(names)
	if err != nil {
		return Run{}, err
	}
	key, err := newKey()
	if err != nil {
		return Run{}, err
	}
	r := Run{Key: key, Node: sn.Name, Checks: slices.Clone(names), Purpose: p, Schedule: schedule, Held: held, Tenant: tenant,
		Actor: actor, State: RunSubmitting, Model: sn.Model(), GPUs: sn.GPUCount(), RequestedAt: s.now()}
	nodes := []string{sn.Name}
	for _, pn := range peers {
		r.Peers = append(r.Peers, pn.Name)
		nodes = append(nodes, pn.Name)
	}
	script := check.Script{Key: key, Checks: checks, Model: r.Model, GPUs: r.GPUs}
	text, err := script.Render()
	if err != nil {
		return Run{}, err
	}
	if tenant != "" {
		r, err = s.Store.CreateTenantRun(ctx, r, r.RequestedAt.Add(-time.Hour), s.Settings.TenantChecksPerHour)
	} else {
		r, err = s.Store.CreateRun(ctx, r)
	}
	if err != nil {
		return Run{}, err
	}
	req := JobRequest{
		Name: "gpubridge-health", Comment: "gpubridge-health run=" + key, Account: s.Settings.Account, User: s.Settings.User,
		QOS: s.Settings.QOS, Partition: s.Settings.Partition, Nodes: nodes, Script: text,
		TimeLimit: script.TimeLimit(), StdOut: s.Outputs.Path(key),
	}
	if req.Partition == "" && len(sn.Partitions) > 0 {
		req.Partition = sn.Partitions[0]
	}
	if held {
		req.Reservation = FenceName(sn.Name)
	}
	if slices.ContainsFunc(checks, func(c check.Check) bool { return c.Exclusive }) {
		var g []string
		for _, t := range sn.GPUs {
			if t.Type != "" && t.Count > 0 {
				g = append(g, fmt.Sprintf("gres/gpu:%s:%d", t.Type, t.Count))
			}
		}
		req.GPUs = strings.Join(g, ",")
	}
	id, err := s.Jobs.Submit(ctx, req)
	if err != nil {
		var rep Report
		if _, aerr := s.abort(ctx, r, "submit failed: "+err.Error(), &rep); aerr != nil {
			s.Logger.Warn("health: aborting an unsubmitted run", "run", r.ID, "error", aerr)
		}
		return Run{}, err
	}
	if err := s.Store.SetRunJob(ctx, r.ID, id); err != nil {
		return Run{}, err
	}
	r.JobID, r.State = id, RunSubmitted
	st.inflight = append(st.inflight, r)
	st.jobs[id] = JobState{State: "PENDING"}
	s.Logger.Debug("health: run submitted", "run", r.ID, "node", r.Node, "checks", strings.Join(names, ","), "job", id, "purpose", p)
	return r, nil
}

// pollEvery is how often settle asks slurmctld whether a job started.
const pollEvery = 2 * time.Second

// settle resumes the held nodes whose acceptance runs wait to start (their
// reservation keeps tenants off), waits up to StartWait for those jobs to
// start, and drains the nodes again.
func (s *Service) settle(ctx context.Context, st *snapshot, rep *Report) {
	var nodes []string
	var ids []int64
	for _, r := range st.inflight {
		if r.Held && st.checking(r.Node) {
			nodes = append(nodes, r.Node)
			ids = append(ids, r.JobID)
		}
	}
	if len(nodes) == 0 {
		return
	}
	s.reconcile(ctx, st, rep, nodes)
	deadline := s.now().Add(s.Settings.StartWait)
	for {
		js, err := s.Jobs.States(ctx, ids)
		if err != nil {
			rep.Errors = append(rep.Errors, "read check jobs: "+err.Error())
			break
		}
		maps(st.jobs, js)
		waiting := false
		for _, id := range ids {
			if j, ok := js[id]; ok && j.Pending() {
				waiting = true
			}
		}
		if !waiting || !s.now().Before(deadline) {
			break
		}
		if err := s.sleep(ctx, pollEvery); err != nil {
			break
		}
	}
	// A node whose job still waits stays resumed behind its reservation;
	// the next cycle drains it once the job has started.
	s.reconcile(ctx, st, rep, nodes)
}

func newKey() (string, error) {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("run key: %w", err)
	}
	return "h" + hex.EncodeToString(b), nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
