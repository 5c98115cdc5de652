package slurmadapter

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/slurmstr"
)

// Adapter is the health service's Slurm, through slurmrestd: nodes,
// health reservations, check jobs, tenants' nodes and (until
// bridge/reserve serves them) bookings. cl must carry an admin's token
// (node updates and reservations need one); check jobs are submitted as
// the health user.
type Adapter struct {
	cl   *slurmrest.Client
	user string
	// FenceFor is how long a health reservation lasts; Fence extends it
	// when less than a tenth is left. Default 365 days.
	FenceFor time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// BookingPrefix names the bookings' reservations, prefix + booking id
	// (bookings.reservationPrefix); default gpubridge-.
	BookingPrefix string
}

var (
	_ health.NodeControl = (*Adapter)(nil)
	_ health.JobRunner   = (*Adapter)(nil)
	_ health.TenantUsage = (*Adapter)(nil)
	_ health.Bookings    = (*Adapter)(nil)
)

// New returns the adapter; user is the health service user check jobs run
// as.
func New(cl *slurmrest.Client, user string) *Adapter {
	return &Adapter{cl: cl, user: user, FenceFor: 365 * 24 * time.Hour}
}

func (a *Adapter) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// Nodes returns every node.
func (a *Adapter) Nodes(ctx context.Context) ([]health.SlurmNode, error) {
	ns, err := a.cl.ListNodes(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]health.SlurmNode, 0, len(ns))
	for _, n := range ns {
		out = append(out, FromNode(n))
	}
	return out, nil
}

// FromNode maps slurmrestd's node.
func FromNode(n slurmrest.Node) health.SlurmNode {
	sn := health.SlurmNode{Name: n.Name, Reason: n.Reason, Partitions: n.Partitions, AllocCPUs: n.AllocCPUs}
	for _, s := range n.State {
		switch s {
		case "DRAIN":
			sn.Drain = true
		case "DOWN", "FAIL":
			sn.Down = true
		}
	}
	for _, g := range n.GPUs() {
		sn.GPUs = append(sn.GPUs, health.GPU{Type: g.Type, Count: int(g.Total)})
		sn.AllocGPUs += int(g.Used)
	}
	return sn
}

// Fences returns the nodes whose health reservation exists and is not
// about to end.
func (a *Adapter) Fences(ctx context.Context) (map[string]bool, error) {
	rs, err := a.cl.ListReservations(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, r := range rs {
		node, ok := fenceNode(r.Name)
		if !ok || r.Nodes != node {
			continue
		}
		if !r.End.IsZero() && r.End.Sub(a.now()) < a.FenceFor/10 {
			continue // Fence extends it
		}
		out[node] = true
	}
	return out, nil
}

func fenceNode(name string) (string, bool) {
	node, ok := strings.CutPrefix(name, health.FenceName(""))
	return node, ok && node != ""
}

// Fence creates the node's health reservation: the whole node, for the
// health user only, MAINT (it may overlap bookings, and slurmdbd accounts
// its time as maintenance) and IGNORE_JOBS (running jobs finish); or
// extends one that exists.
func (a *Adapter) Fence(ctx context.Context, node string) error {
	name := health.FenceName(node)
	now := a.now().UTC().Truncate(time.Second)
	r, err := a.cl.GetReservation(ctx, name)
	switch {
	case err == nil:
		if r.Nodes != node {
			return fmt.Errorf("reservation %s holds %q, not %s: remove it by hand (scontrol delete reservation=%s)", name, r.Nodes, node, name)
		}
		return a.cl.UpdateReservations(ctx, []slurmrest.ReservationSpec{{Name: name, End: now.Add(a.FenceFor), Flags: []string{"IGNORE_JOBS"}}})
	case !errors.Is(err, slurmrest.ErrNotFound):
		return err
	}
	_, err = a.cl.CreateReservation(ctx, slurmrest.ReservationSpec{
		Name: name, Users: []string{a.user}, Nodes: []string{node}, Start: now, Duration: a.FenceFor.Truncate(time.Minute),
		Flags: []string{"MAINT", "IGNORE_JOBS"}, Comment: "gpubridge health: " + node + " serves no tenant until it passes its checks",
	})
	return err
}

// Unfence deletes the node's health reservation.
func (a *Adapter) Unfence(ctx context.Context, node string) error {
	err := a.cl.DeleteReservation(ctx, health.FenceName(node))
	if errors.Is(err, slurmrest.ErrNotFound) {
		return nil
	}
	return err
}

// Drain sets DRAIN with reason.
func (a *Adapter) Drain(ctx context.Context, node, reason string) error {
	return a.cl.UpdateNode(ctx, node, slurmrest.NodeDrain, reason)
}

// Down sets DOWN with reason.
func (a *Adapter) Down(ctx context.Context, node, reason string) error {
	return a.cl.UpdateNode(ctx, node, slurmrest.NodeDown, reason)
}

// Resume resumes the node.
func (a *Adapter) Resume(ctx context.Context, node string) error {
	return a.cl.UpdateNode(ctx, node, slurmrest.NodeResume, "")
}

// Submit submits a check job as the health user.
func (a *Adapter) Submit(ctx context.Context, r health.JobRequest) (int64, error) {
	res, err := a.cl.As(r.User).SubmitJob(ctx, slurmrest.JobSpec{
		Name: r.Name, Account: r.Account, Partition: r.Partition, QOS: r.QOS, Reservation: r.Reservation,
		TRESPerNode: r.GPUs, Script: r.Script, TimeLimitMinutes: int64(math.Ceil(r.TimeLimit.Minutes())),
		Comment: r.Comment, StdOut: r.StdOut, WorkDir: "/tmp", RequiredNodes: r.Nodes, Nodes: len(r.Nodes),
	})
	if err != nil {
		return 0, err
	}
	return res.JobID, nil
}

// States returns the jobs' states in one request (one per job when a job
// is already forgotten and slurmctld refuses the list).
func (a *Adapter) States(ctx context.Context, ids []int64) (map[int64]health.JobState, error) {
	out := map[int64]health.JobState{}
	if len(ids) == 0 {
		return out, nil
	}
	strs := make([]string, len(ids))
	for i, id := range ids {
		strs[i] = fmt.Sprint(id)
	}
	states, err := a.cl.ListJobStates(ctx, strs...)
	if err == nil {
		for _, s := range states {
			var id int64
			if _, err := fmt.Sscan(s.ID, &id); err == nil && slices.Contains(ids, id) {
				out[id] = health.JobState{State: baseState(s.State)}
			}
		}
		return out, nil
	}
	if !errors.Is(err, slurmrest.ErrNotFound) {
		return nil, err
	}
	for _, id := range ids {
		j, err := a.cl.GetJob(ctx, id)
		if errors.Is(err, slurmrest.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[id] = health.JobState{State: baseState(j.State), Start: j.StartTime, End: j.EndTime}
	}
	return out, nil
}

// baseState picks the job's base state from slurmctld's list (flags such
// as COMPLETING or REQUEUED come with a base state).
func baseState(states []string) string {
	for _, s := range states {
		switch s {
		case "PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY":
			if s == "RUNNING" && slices.Contains(states, "COMPLETING") {
				return "COMPLETING"
			}
			return s
		}
	}
	if len(states) > 0 {
		return states[0]
	}
	return "UNKNOWN"
}

// Find returns the check job of a run key.
func (a *Adapter) Find(ctx context.Context, key string) (int64, bool, error) {
	jobs, err := a.cl.ListJobs(ctx, slurmrest.JobFilter{})
	if err != nil {
		return 0, false, err
	}
	for _, j := range jobs {
		if strings.Contains(j.Comment, "run="+key) {
			return j.ID, true, nil
		}
	}
	return 0, false, nil
}

// Cancel cancels a job.
func (a *Adapter) Cancel(ctx context.Context, id int64) error {
	err := a.cl.CancelJob(ctx, id)
	if errors.Is(err, slurmrest.ErrNotFound) {
		return nil
	}
	return err
}

// TenantNodes returns the nodes running jobs of the tenant's account (a
// tenant's Slurm account has the tenant's name).
func (a *Adapter) TenantNodes(ctx context.Context, tenant string) ([]string, error) {
	jobs, err := a.cl.ListJobs(ctx, slurmrest.JobFilter{States: []string{"RUNNING"}, Accounts: []string{tenant}})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, j := range jobs {
		names, err := slurmstr.ExpandHostlist(j.Nodes)
		if err != nil {
			return nil, fmt.Errorf("job %d nodes %q: %w", j.ID, j.Nodes, err)
		}
		for _, n := range names {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// NodeUses returns where the tenant's jobs ran in [since, until], from
// slurmdbd's job records of the tenant's account (its name): one use per
// job and node, a job still running ending at until.
func (a *Adapter) NodeUses(ctx context.Context, tenant string, since, until time.Time) ([]health.NodeUse, error) {
	jobs, err := a.cl.ListDBJobs(ctx, slurmrest.DBJobFilter{Start: since, End: until, Accounts: []string{tenant}, SkipSteps: true, NoTruncate: true})
	if err != nil {
		return nil, err
	}
	var out []health.NodeUse
	for _, j := range jobs {
		if j.StartTime.IsZero() || j.Nodes == "" || j.Nodes == "None assigned" || j.Account != tenant {
			continue // never ran
		}
		end := j.EndTime
		if end.IsZero() || end.After(until) {
			end = until
		}
		names, err := slurmstr.ExpandHostlist(j.Nodes)
		if err != nil {
			return nil, fmt.Errorf("job %d nodes %q: %w", j.JobID, j.Nodes, err)
		}
		for _, n := range names {
			out = append(out, health.NodeUse{Node: n, Start: j.StartTime.UTC(), End: end.UTC()})
		}
	}
	return out, nil
}

// bookingID is what follows the prefix in a booking's reservation name.
var bookingID = regexp.MustCompile(`^[0-9]+$`)

func (a *Adapter) isBooking(name string) bool {
	p := a.BookingPrefix
	if p == "" {
		p = "gpubridge-"
	}
	id, ok := strings.CutPrefix(name, p)
	return ok && bookingID.MatchString(id)
}

// BookedNodes returns the nodes of the bookings' reservations (prefix +
// booking id, projected by bridge/reserve) open to the tenant's account at
// a time: Slurm's node lists are where the bookings landed.
func (a *Adapter) BookedNodes(ctx context.Context, tenant string, at time.Time) ([]string, error) {
	rs, err := a.cl.ListReservations(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rs {
		if !a.isBooking(r.Name) || !slices.Contains(r.Accounts, tenant) || at.Before(r.Start) || !at.Before(r.End) {
			continue
		}
		names, err := slurmstr.ExpandHostlist(r.Nodes)
		if err != nil {
			return nil, fmt.Errorf("reservation %s nodes %q: %w", r.Name, r.Nodes, err)
		}
		out = append(out, names...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
