package slurmjobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/slurmrest"
)

// Client is what the adapter needs of *slurmrest.Client.
type Client interface {
	ListJobs(ctx context.Context, f slurmrest.JobFilter) ([]slurmrest.Job, error)
	UpdateJob(ctx context.Context, id int64, u slurmrest.JobUpdate) error
}

var _ Client = (*slurmrest.Client)(nil)

// Jobs reads and moves jobs through slurmrestd.
type Jobs struct {
	Client Client
	Logger *slog.Logger
}

var (
	_ burst.JobLister = (*Jobs)(nil)
	_ burst.Mover     = (*Jobs)(nil)
)

// activeStates are the states whose jobs the decision looks at: pending
// ones (candidates, or on-demand work waiting) and those holding resources.
var activeStates = []string{"PENDING", "RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING", "REQUEUED", "RESIZING"}

// ListJobs reads every active job in one request.
func (a *Jobs) ListJobs(ctx context.Context) ([]burst.Job, error) {
	js, err := a.Client.ListJobs(ctx, slurmrest.JobFilter{States: activeStates})
	if err != nil {
		return nil, err
	}
	out := make([]burst.Job, 0, len(js))
	for _, j := range js {
		bj, err := Convert(j)
		if err != nil && a.Logger != nil {
			// The job is kept without GPUs: it is never moved, and the
			// problem is visible in the log.
			a.Logger.Warn("cannot read a job's GPUs", "job", j.ID, "err", err)
		}
		out = append(out, bj)
	}
	return out, nil
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
