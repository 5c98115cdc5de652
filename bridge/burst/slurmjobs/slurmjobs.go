package slurmjobs

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

// Client is what the adapter needs of *slurmrest.Client.
type Client interface {
	ListJobsSince(ctx context.Context, f slurmrest.JobFilter, since time.Time) (slurmrest.JobsPage, error)
	UpdateJob(ctx context.Context, id int64, u slurmrest.JobUpdate) error
}

var _ Client = (*slurmrest.Client)(nil)

// DefaultMaxAge is how long Jobs reuses its last read while slurmctld
// reports no job change, before it reads every job again anyway.
const DefaultMaxAge = 5 * time.Minute

// Jobs reads and moves jobs through slurmrestd. It keeps its last read:
// the next one asks slurmctld for the jobs only if a job changed since
// (update_time), so a cycle on a quiet cluster costs one small read, and
// one that follows any change reads and decodes every job once.
type Jobs struct {
	Client Client
	Logger *slog.Logger
	// MaxAge bounds how long a read is reused (default DefaultMaxAge; a
	// negative one never reuses).
	MaxAge time.Duration
	// Now is the clock of MaxAge (default time.Now).
	Now func() time.Time

	mu       sync.Mutex
	last     []burst.Job
	lastRead Read
	since    time.Time // slurmctld's last job change, as of the last read
	readAt   time.Time // when the jobs were last read in full
}

// Read describes the adapter's last read of the jobs.
type Read struct {
	Jobs      int  // the active jobs it returned
	Unchanged bool // slurmctld reported no change: the previous read was reused
	// Bytes, Fetch and Decode are slurmrest.JobsPage's: the body's size,
	// slurmrestd's time (request to last byte) and ours (decoding).
	Bytes         int
	Fetch, Decode time.Duration
	// Convert is the time to convert the decoded jobs to burst.Job.
	Convert time.Duration
}

var (
	_ burst.JobLister = (*Jobs)(nil)
	_ burst.Mover     = (*Jobs)(nil)
)

// activeStates are the states whose jobs the decision looks at: pending
// ones (candidates, or on-demand work waiting) and those holding resources.
var activeStates = []string{"PENDING", "RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING", "REQUEUED", "RESIZING"}

// ListJobs reads every active job in one request; when slurmctld reports
// that no job changed since the last read, it returns that read again.
func (a *Jobs) ListJobs(ctx context.Context) ([]burst.Job, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	since := a.since
	if maxAge := a.maxAge(); a.last == nil || maxAge < 0 || now.Sub(a.readAt) >= maxAge {
		since = time.Time{}
	}
	page, err := a.Client.ListJobsSince(ctx, slurmrest.JobFilter{States: activeStates}, since)
	if err != nil {
		return nil, err
	}
	read := Read{Unchanged: page.Unchanged, Bytes: page.Bytes, Fetch: page.Fetch, Decode: page.Decode}
	defer func() { a.debug(read) }()
	if page.Unchanged {
		read.Jobs = len(a.last)
		a.lastRead = read
		return slices.Clone(a.last), nil
	}
	t0 := time.Now()
	out := make([]burst.Job, 0, len(page.Jobs))
	for _, j := range page.Jobs {
		bj, err := Convert(j)
		if err != nil && a.Logger != nil {
			// The job is kept without GPUs: it is never moved, and the
			// problem is visible in the log.
			a.Logger.Warn("cannot read a job's GPUs", "job", j.ID, "err", err)
		}
		out = append(out, bj)
	}
	read.Convert, read.Jobs = time.Since(t0), len(out)
	a.last, a.since, a.readAt, a.lastRead = out, page.LastUpdate, now, read
	return slices.Clone(out), nil
}

func (a *Jobs) debug(r Read) {
	if a.Logger != nil {
		a.Logger.Debug("jobs read", "jobs", r.Jobs, "unchanged", r.Unchanged, "bytes", r.Bytes,
			"slurmrestd", r.Fetch.Round(time.Millisecond), "decode", r.Decode.Round(time.Millisecond), "convert", r.Convert.Round(time.Millisecond))
	}
}

// LastRead describes the last ListJobs (for logs and benchmarks).
func (a *Jobs) LastRead() Read {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lastRead
}

func (a *Jobs) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func (a *Jobs) maxAge() time.Duration {
	if a.MaxAge == 0 {
		return DefaultMaxAge
	}
	return a.MaxAge
}

// MoveJob sets partition, QOS and admin comment in one update.
func (a *Jobs) MoveJob(ctx context.Context, id int64, partition, qos, adminComment string) error {
	return a.Client.UpdateJob(ctx, id, slurmrest.JobUpdate{Partition: &partition, QOS: &qos, AdminComment: &adminComment})
}

// Convert maps slurmrest's view of a job to the decision's. On an
// unreadable TRES string or array task list it returns the job without
// GPUs and the error.
func Convert(j slurmrest.Job) (burst.Job, error) {
	bj := burst.Job{
		ID: j.ID, Name: j.Name, User: j.User, Account: j.Account, Partition: j.Partition, QOS: j.QOS,
		States: j.State, Reason: j.Reason, Comment: j.Comment, AdminComment: j.AdminComment,
		SubmitTime: j.SubmitTime, EligibleTime: j.EligibleTime, Tasks: 1,
	}
	if j.HasState("PENDING") {
		bj.StartTime = time.Time{} // slurmctld's expected start, not a start
	} else {
		bj.StartTime = j.StartTime
	}
	if v, ok := j.TimeLimitMinutes.Value(); ok && v > 0 {
		bj.TimeLimit = time.Duration(v) * time.Minute
	}
	if v, ok := j.Priority.Value(); ok {
		bj.Priority = v
	}
	var err error
	if !j.HasState("PENDING") && j.TRESAllocated != "" {
		bj.GPUs, err = burst.ParseRequest(burst.RequestFields{TRESRequested: j.TRESAllocated})
	} else {
		nodes, _ := j.NodeCount.Value()
		bj.GPUs, err = burst.ParseRequest(burst.RequestFields{
			TRESRequested: j.TRESRequested, TRESPerJob: j.TRESPerJob, TRESPerNode: j.TRESPerNode, Nodes: nodes,
		})
	}
	if err != nil {
		bj.GPUs = nil
		return bj, fmt.Errorf("job %d: %w", j.ID, err)
	}
	// A pending array record stands for its tasks not split off yet; a
	// task that was split off (array_task_id set) is a job of its own and
	// has no task string.
	if j.HasState("PENDING") && j.ArrayTaskString != "" {
		n, err := burst.ArrayTasks(j.ArrayTaskString)
		if err != nil {
			bj.GPUs = nil
			return bj, fmt.Errorf("job %d: %w", j.ID, err)
		}
		bj.Tasks = n
	}
	return bj, nil
}
