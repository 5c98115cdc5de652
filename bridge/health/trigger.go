package health

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health/check"
)

// Request is a check triggered on one node by a tenant or an admin.
type Request struct {
	Node string
	// Checks to run; empty takes Settings.TriggerChecks.
	Checks []string
	// Tenant that asks; empty for a site admin. A tenant may check only the
	// nodes that run its jobs or are booked for it, at most
	// TenantChecksPerHour times an hour, and only nodes in service.
	Tenant string
	Actor  string
	// Peer is the second node of a two-node check (nccl-2node): the job
	// spans Node and Peer, and its result is each node's. Both must be
	// in service, free of runs, of the same GPU model and in a partition
	// together; a tenant must use both.
	Peer string
}

// Trigger submits a run for a request and returns it. The run is judged
// like any other (a failing check drains the node) once its job ends: the
// next cycle, or Harvest, finishes it. Its job runs under the health
// service account: nothing of it is billed to the tenant.
func (s *Service) Trigger(ctx context.Context, q Request) (Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names, checks, err := s.triggerChecks(q)
	if err != nil {
		return Run{}, err
	}
	now := s.now()
	if q.Tenant != "" {
		if err := s.mayCheck(ctx, q.Tenant, q.Node, now); err != nil {
			return Run{}, err
		}
		if q.Peer != "" {
			if err := s.mayCheck(ctx, q.Tenant, q.Peer, now); err != nil {
				return Run{}, err
			}
		}
	}
	st, err := s.load(ctx)
	if err != nil {
		return Run{}, err
	}
	sn, rec, err := s.triggerable(st, q)
	if err != nil {
		return Run{}, err
	}
	purpose := PurposeAdmin
	if q.Tenant != "" {
		purpose = PurposeTenant
	}
	if q.Peer != "" {
		// Built-in checks judge per GPU model (nccl-2node's bandwidth);
		// a site check may pair any two nodes.
		sameModel := slices.ContainsFunc(checks, func(c check.Check) bool { return c.Kind != check.KindSite })
		peer, err := s.peer(st, sn, rec, q.Peer, q.Tenant, sameModel)
		if err != nil {
			return Run{}, err
		}
		return s.submit(ctx, st, sn, names, purpose, "", false, q.Tenant, q.Actor, peer)
	}
	return s.triggerOne(ctx, st, sn, rec, names, purpose, q)
}

// triggerChecks are the names and checks a request runs (the trigger set
// when it names none), refused unless they and the peer make one run: all
// single-node checks without a peer, or all two-node checks with a managed
// peer that is another node.
func (s *Service) triggerChecks(q Request) ([]string, []check.Check, error) {
	if !s.managed(q.Node) {
		return nil, nil, fmt.Errorf("%w: %s is not under gpubridge's health management (health.nodes: %s)", ErrUnknownNode, q.Node, strings.Join(s.Settings.Nodes, ","))
	}
	names := q.Checks
	if len(names) == 0 {
		names = s.Settings.TriggerChecks
	}
	checks, err := s.Catalog.Resolve(names)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	span := 1
	for _, c := range checks {
		span = max(span, c.Nodes)
	}
	for _, c := range checks {
		switch {
		case c.Nodes > 2:
			return nil, nil, fmt.Errorf("%w: %s spans %d nodes; gpubridge runs checks on one or two nodes", ErrInvalid, c.Name, c.Nodes)
		case span == 2 && c.Nodes != 2:
			return nil, nil, fmt.Errorf("%w: %s is a single-node check; a two-node run holds only two-node checks (run %s on its own)", ErrInvalid, c.Name, c.Name)
		}
	}
	switch {
	case span == 2 && q.Peer == "":
		return nil, nil, fmt.Errorf("%w: %s spans 2 nodes: name the second with peer=NODE", ErrInvalid, strings.Join(names, ","))
	case span == 1 && q.Peer != "":
		return nil, nil, fmt.Errorf("%w: peer=%s is for two-node checks (nccl-2node); %s runs on one node", ErrInvalid, q.Peer, strings.Join(names, ","))
	case q.Peer == q.Node:
		return nil, nil, fmt.Errorf("%w: peer=%s is the node itself; a two-node check needs another node", ErrInvalid, q.Peer)
	case q.Peer != "" && !s.managed(q.Peer):
		return nil, nil, fmt.Errorf("%w: peer %s is not under gpubridge's health management (health.nodes: %s)", ErrUnknownNode, q.Peer, strings.Join(s.Settings.Nodes, ","))
	}
	return names, checks, nil
}

// triggerable is the requested node as slurmctld and gpubridge know it,
// refused when gpubridge has not admitted it, does not hold it, holds it
// away from tenants (for a tenant's request), or a run is on it or at the
// cap of runs in flight.
func (s *Service) triggerable(st *snapshot, q Request) (SlurmNode, Node, error) {
	sn, ok := st.slurm[q.Node]
	if !ok {
		return SlurmNode{}, Node{}, fmt.Errorf("%w: slurmctld does not know node %s", ErrUnknownNode, q.Node)
	}
	rec, ok := st.recs[q.Node]
	switch {
	case !ok:
		return SlurmNode{}, Node{}, fmt.Errorf("%w: %s is new to gpubridge and not admitted yet (its burn-in starts at the next health cycle)", ErrBusy, q.Node)
	case rec.State == External:
		return SlurmNode{}, Node{}, fmt.Errorf("%w: %s is %s; gpubridge does not check a node it does not hold", ErrNotAllowed, q.Node, rec.Reason)
	case rec.State.Held() && q.Tenant != "":
		return SlurmNode{}, Node{}, fmt.Errorf("%w: %s is held by gpubridge (%s): it serves no tenant until it requalifies", ErrNotAllowed, q.Node, DrainReason(rec))
	}
	if r, busy := st.runOn(q.Node); busy {
		return SlurmNode{}, Node{}, busyError(r, q.Node, q.Tenant)
	}
	if st.activeRuns() >= s.Settings.MaxConcurrent {
		return SlurmNode{}, Node{}, fmt.Errorf("%w: %d check jobs are in flight, the cap (health.maxConcurrent); try again later", ErrBusy, st.activeRuns())
	}
	return sn, rec, nil
}

// triggerOne submits a single-node run on sn (record rec). On a held node
// an admin's run is an acceptance run: it holds the node's own checks too,
// its reservation is reconciled first and its passes settled after.
func (s *Service) triggerOne(ctx context.Context, st *snapshot, sn SlurmNode, rec Node, names []string, purpose Purpose, q Request) (Run, error) {
	held := rec.State.Held() // an admin's acceptance run on a held node counts toward its passes
	if held {
		names = union(names, rec.Checks)
	}
	var rep Report
	if held {
		s.reconcile(ctx, st, &rep, []string{q.Node}) // its reservation first
	}
	r, err := s.submit(ctx, st, sn, names, purpose, "", held, q.Tenant, q.Actor)
	if err != nil {
		return Run{}, err
	}
	if held {
		s.settle(ctx, st, &rep)
	}
	if len(rep.Errors) > 0 {
		return r, fmt.Errorf("run %d submitted, but: %s", r.ID, strings.Join(rep.Errors, "; "))
	}
	return r, nil
}

// peer checks the second node of a two-node run on sn (record rec): both
// in service (a held node runs its acceptance set alone), no run on the
// peer, the same GPU model and count (sameModel: a built-in check, judged
// per model), a partition in common.
func (s *Service) peer(st *snapshot, sn SlurmNode, rec Node, name, tenant string, sameModel bool) (SlurmNode, error) {
	pn, ok := st.slurm[name]
	if !ok {
		return SlurmNode{}, fmt.Errorf("%w: slurmctld does not know node %s", ErrUnknownNode, name)
	}
	prec, ok := st.recs[name]
	switch {
	case !rec.State.InService():
		return SlurmNode{}, fmt.Errorf("%w: %s is %s; two-node checks run on nodes in service", ErrNotAllowed, sn.Name, rec.State)
	case !ok:
		return SlurmNode{}, fmt.Errorf("%w: %s is new to gpubridge and not admitted yet", ErrBusy, name)
	case !prec.State.InService():
		return SlurmNode{}, fmt.Errorf("%w: peer %s is %s; two-node checks run on nodes in service", ErrNotAllowed, name, prec.State)
	case sameModel && (pn.Model() != sn.Model() || pn.GPUCount() != sn.GPUCount()):
		return SlurmNode{}, fmt.Errorf("%w: %s has %d %s GPUs, peer %s has %d %s; a two-node check pairs nodes of one model", ErrInvalid,
			sn.Name, sn.GPUCount(), sn.Model(), name, pn.GPUCount(), pn.Model())
	}
	if r, busy := st.runOn(name); busy {
		return SlurmNode{}, busyError(r, name, tenant)
	}
	part := s.Settings.Partition
	if part == "" && len(sn.Partitions) > 0 {
		part = sn.Partitions[0]
	}
	if part != "" && !slices.Contains(pn.Partitions, part) {
		return SlurmNode{}, fmt.Errorf("%w: peer %s is not in partition %s of %s; a two-node job runs in one partition", ErrInvalid, name, part, sn.Name)
	}
	return pn, nil
}

// busyError refuses a check on node while run r is in flight there; a
// tenant is not told another tenant's run.
func busyError(r Run, node, tenant string) error {
	if hidden(r, tenant) {
		return fmt.Errorf("%w: %s is in flight on %s; try again when it has ended", ErrBusy, OtherTenantsRun, node)
	}
	return fmt.Errorf("%w: run %d (%s) is in flight on %s; see `gpubridge show checks run=%d`", ErrBusy, r.ID, strings.Join(r.Checks, ","), node, r.ID)
}

// ErrStillRunning: CheckNow's wait ended before the run did (the run goes
// on; its results come with a later cycle).
var ErrStillRunning = errors.New("still running")

// CheckNow triggers a run (Trigger) and, when wait is above 0, waits up to
// wait for its results. Without a wait it returns the submitted run and no
// results. A run that gives no verdict (its job was cancelled) is an error
// naming why; a run that outlasts the wait is ErrStillRunning with the run.
func (s *Service) CheckNow(ctx context.Context, q Request, wait time.Duration) (Run, []StoredResult, error) {
	r, err := s.Trigger(ctx, q)
	if err != nil || wait <= 0 {
		return r, nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	run, res, err := s.Wait(wctx, r.ID)
	switch {
	case err != nil && wctx.Err() != nil && ctx.Err() == nil:
		return r, nil, fmt.Errorf("%w: run %d (job %d) did not finish within %s; it goes on: `gpubridge show checks run=%d`", ErrStillRunning, r.ID, r.JobID, wait, r.ID)
	case err != nil:
		return r, nil, fmt.Errorf("%w (the run goes on: `gpubridge show checks run=%d`)", err, r.ID)
	case run.State == RunAborted:
		return run, nil, fmt.Errorf("run %d gave no verdict: %s", run.ID, run.Note)
	}
	return run, res, nil
}

// mayCheck authorizes a tenant's check: the node runs its jobs or is booked
// for it, and it is within its rate. The rate is checked here to refuse
// early, and again by the store as it records the run (submit), where the
// count and the new run are one step across processes and replicas.
func (s *Service) mayCheck(ctx context.Context, tenant, node string, now time.Time) error {
	nodes, err := s.TenantNodes(ctx, tenant, now)
	if err != nil {
		return err
	}
	if !slices.Contains(nodes, node) {
		return fmt.Errorf("%w: tenant %s has no job running on %s and no booking of it; a tenant may check only the nodes it uses", ErrNotAllowed, tenant, node)
	}
	n, err := s.Store.TenantRuns(ctx, tenant, now.Add(-time.Hour))
	if err != nil {
		return err
	}
	if n >= s.Settings.TenantChecksPerHour {
		return TenantCapError(tenant, n, s.Settings.TenantChecksPerHour)
	}
	return nil
}

// TenantCapError refuses a tenant's check: n checks in the last hour,
// max the limit.
func TenantCapError(tenant string, n, max int) error {
	return fmt.Errorf("%w: tenant %s triggered %d checks in the last hour, the limit (health.tenantChecksPerHour=%d)", ErrRateLimited, tenant, n, max)
}

// TenantNodes are the managed nodes a tenant uses now: running its jobs or
// booked for it.
func (s *Service) TenantNodes(ctx context.Context, tenant string, at time.Time) ([]string, error) {
	var nodes []string
	if s.Usage != nil {
		used, err := s.Usage.TenantNodes(ctx, tenant)
		if err != nil {
			return nil, fmt.Errorf("nodes of tenant %s: %w", tenant, err)
		}
		nodes = append(nodes, used...)
	}
	booked, err := s.Bookings.BookedNodes(ctx, tenant, at)
	if err != nil {
		return nil, fmt.Errorf("bookings of tenant %s: %w", tenant, err)
	}
	nodes = union(nodes, booked)
	out := nodes[:0]
	for _, n := range nodes {
		if s.managed(n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Wait polls a run's job until it ends (or ctx is done), then harvests. It
// returns the run as stored and its results.
func (s *Service) Wait(ctx context.Context, id int64) (Run, []StoredResult, error) {
	for {
		r, err := s.Store.Run(ctx, id)
		if err != nil {
			return Run{}, nil, err
		}
		if r.State == RunDone || r.State == RunAborted {
			res, err := s.Store.Results(ctx, ResultFilter{RunID: id})
			return r, res, err
		}
		ended := r.JobID == 0
		if r.JobID > 0 {
			js, err := s.Jobs.States(ctx, []int64{r.JobID})
			if err != nil {
				return r, nil, err
			}
			j, known := js[r.JobID]
			ended = !known || !j.Active()
		}
		if ended {
			if _, err := s.Harvest(ctx); err != nil {
				s.Logger.Warn("health: harvest", "error", err)
			}
			if r2, err := s.Store.Run(ctx, id); err == nil && (r2.State == RunDone || r2.State == RunAborted) {
				continue
			}
		}
		if err := s.sleep(ctx, pollEvery); err != nil {
			return r, nil, fmt.Errorf("run %d (job %d) still running: %w", id, r.JobID, err)
		}
	}
}

// ResumeNode is the admin override: a node gpubridge holds serves again at
// once, without its requalify runs. It is audited. A node drained outside
// gpubridge is refused: gpubridge resumes only its own drains.
func (s *Service) ResumeNode(ctx context.Context, node, actor, why string) (Node, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.managed(node) {
		return Node{}, fmt.Errorf("%w: %s is not under gpubridge's health management", ErrUnknownNode, node)
	}
	st, err := s.load(ctx)
	if err != nil {
		return Node{}, err
	}
	rec, ok := st.recs[node]
	switch {
	case !ok:
		return Node{}, fmt.Errorf("%w: gpubridge holds no record of %s yet", ErrInvalid, node)
	case rec.State == External:
		return Node{}, fmt.Errorf("%w: %s was %s; gpubridge never resumes another's drain (use scontrol if you mean to)", ErrNotAllowed, node, rec.Reason)
	case !rec.State.Held():
		return rec, fmt.Errorf("%w: %s is %s, not held by gpubridge", ErrInvalid, node, rec.State)
	}
	now := s.now()
	why = strings.TrimSpace(why)
	if why == "" {
		why = "admin override"
	}
	next := Node{Name: node, State: Serving, Since: now, Reason: fmt.Sprintf("resumed by %s: %s", actor, why), Version: rec.Version}
	ev := Event{Node: node, At: now, From: rec.State, To: Serving, Reason: next.Reason, Actor: actor}
	stored, err := s.Store.Override(ctx, Override{Node: next, Event: ev, Actor: actor, Action: "resume", Before: rec, After: next})
	if err != nil {
		return Node{}, err
	}
	st.recs[node] = stored
	var rep Report
	s.reconcile(ctx, st, &rep, []string{node})
	if len(rep.Errors) > 0 {
		return stored, fmt.Errorf("%s is serving in gpubridge's records, but Slurm was not updated (the next cycle retries): %s", node, strings.Join(rep.Errors, "; "))
	}
	moved := Report{Events: []Event{ev}}
	if s.reproject(ctx, &moved); len(moved.Errors) > 0 {
		return stored, fmt.Errorf("%s is serving again, but its bookings were not re-projected (the bookings job will): %s", node, strings.Join(moved.Errors, "; "))
	}
	return stored, nil
}

// NodeView is one line of `show health`.
type NodeView struct {
	Node
	Managed     bool          `json:"managed"`
	SlurmState  string        `json:"slurmState"`
	SlurmReason string        `json:"slurmReason,omitempty"`
	Fenced      bool          `json:"fenced"`
	Running     *Run          `json:"running,omitempty"`
	Last        *StoredResult `json:"last,omitempty"`
}

// HealthFilter selects the nodes of `show health`.
type HealthFilter struct {
	Node   string
	Tenant string // the nodes the tenant uses now
}

// Health lists the managed nodes with their lifecycle and Slurm states.
func (s *Service) Health(ctx context.Context, f HealthFilter) ([]NodeView, error) {
	st, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	nodes := s.Settings.Nodes
	if f.Tenant != "" {
		if nodes, err = s.TenantNodes(ctx, f.Tenant, s.now()); err != nil {
			return nil, err
		}
	}
	var out []NodeView
	for _, name := range nodes {
		if f.Node != "" && name != f.Node {
			continue
		}
		v := NodeView{Node: Node{Name: name}, Managed: true}
		if rec, ok := st.recs[name]; ok {
			v.Node = rec
		}
		if sn, ok := st.slurm[name]; ok {
			v.SlurmState, v.SlurmReason = slurmState(sn), sn.Reason
		} else {
			v.SlurmState = "UNKNOWN (not in slurmctld)"
		}
		v.Fenced = st.fences[name]
		if r, ok := st.runOn(name); ok {
			v.Running = visibleRun(r, name, f.Tenant)
		}
		last, err := s.Store.Results(ctx, ResultFilter{Node: name, VisibleTo: f.Tenant, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(last) > 0 {
			v.Last = &last[0]
		}
		out = append(out, v)
	}
	if f.Node != "" && len(out) == 0 {
		return nil, fmt.Errorf("%w: %s is not under gpubridge's health management (or not used by tenant %s)", ErrUnknownNode, f.Node, f.Tenant)
	}
	return out, nil
}

// visibleRun is run r, in flight on node, as tenant sees it (everything
// for an admin, an empty tenant): another tenant's run keeps only node,
// its state and purpose (the node is busy), without id, key, checks, the
// other node of a two-node run, job, actor or time.
func visibleRun(r Run, node, tenant string) *Run {
	if !hidden(r, tenant) {
		return &r
	}
	return &Run{Node: node, Purpose: r.Purpose, State: r.State, Note: OtherTenantsRun}
}

// hidden: run r is another tenant's, not to be shown to tenant (an
// admin, tenant "", sees every run).
func hidden(r Run, tenant string) bool { return tenant != "" && r.Tenant != "" && r.Tenant != tenant }

// OtherTenantsRun is the note of a run redacted by visibleRun.
const OtherTenantsRun = "another tenant's check"

func slurmState(n SlurmNode) string {
	var p []string
	switch {
	case n.Down:
		p = append(p, "DOWN")
	case n.AllocCPUs > 0 || n.AllocGPUs > 0:
		p = append(p, "MIXED")
	default:
		p = append(p, "IDLE")
	}
	if n.Drain {
		p = append(p, "DRAIN")
	}
	return strings.Join(p, "+")
}

// Results lists stored check results, newest first. A tenant's filter
// shows only the runs that tenant triggered.
func (s *Service) Results(ctx context.Context, f ResultFilter) ([]StoredResult, error) {
	return s.Store.Results(ctx, f)
}
