package slurmrest

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Job is a job as slurmctld knows it (pending, running or recently ended).
type Job struct {
	ID        int64
	Name      string
	User      string
	Account   string
	Partition string
	QOS       string
	State     []string // e.g. [PENDING], [RUNNING], [COMPLETED]
	// Reason is why the job pends (state_reason), e.g. QOSGrpGRES,
	// Resources, Priority, JobHeldUser; "None" when it does not.
	Reason        string
	Hold          bool
	Priority      Limit
	TRESPerNode   string // e.g. gres/gpu:1g.10gb:1
	TRESPerJob    string // e.g. gres/gpu:h100:2 (--gpus)
	TRESRequested string // tres_req_str
	// NodeCount is the (minimum) node count the job asks for.
	NodeCount Limit
	// ArrayJobID is the array's job id (unset for a plain job);
	// ArrayTaskString the task ids a pending array record still holds,
	// e.g. "3-9%2".
	ArrayJobID       Limit
	ArrayTaskString  string
	TRESAllocated    string // tres_alloc_str
	Nodes            string // allocated nodes
	Reservation      string
	Comment          string
	AdminComment     string
	WorkDir          string
	TimeLimitMinutes Limit
	SubmitTime       time.Time
	EligibleTime     time.Time
	StartTime        time.Time // actual, or expected when pending
	EndTime          time.Time // actual, or expected
}

// HasState reports whether the job is in state s (e.g. PENDING).
func (j Job) HasState(s string) bool { return slices.Contains(j.State, s) }

// JobFilter selects jobs client-side from one GET of all jobs. Empty fields
// match everything; within a field any value matches.
type JobFilter struct {
	States     []string // PENDING, RUNNING, ...
	Reasons    []string // state_reason, e.g. QOSGrpGRES
	Users      []string
	Accounts   []string
	Partitions []string
	QOS        []string
}

func (f JobFilter) match(j Job) bool {
	in := func(list []string, v string) bool { return len(list) == 0 || slices.Contains(list, v) }
	if len(f.States) > 0 && !slices.ContainsFunc(j.State, func(s string) bool { return slices.Contains(f.States, s) }) {
		return false
	}
	return in(f.Reasons, j.Reason) && in(f.Users, j.User) && in(f.Accounts, j.Account) &&
		in(f.Partitions, j.Partition) && in(f.QOS, j.QOS)
}

type wJob struct {
	JobID        int64    `json:"job_id"`
	Name         string   `json:"name"`
	UserName     string   `json:"user_name"`
	Account      string   `json:"account"`
	Partition    string   `json:"partition"`
	QOS          string   `json:"qos"`
	JobState     []string `json:"job_state"`
	StateReason  string   `json:"state_reason"`
	Hold         bool     `json:"hold"`
	Priority     *wNoVal  `json:"priority"`
	TRESPerNode  string   `json:"tres_per_node"`
	TRESPerJob   string   `json:"tres_per_job"`
	NodeCount    *wNoVal  `json:"node_count"`
	ArrayJobID   *wNoVal  `json:"array_job_id"`
	ArrayTasks   string   `json:"array_task_string"`
	TRESReqStr   string   `json:"tres_req_str"`
	TRESAllocStr string   `json:"tres_alloc_str"`
	Nodes        string   `json:"nodes"`
	ResvName     string   `json:"resv_name"`
	Comment      string   `json:"comment"`
	AdminComment string   `json:"admin_comment"`
	CWD          string   `json:"current_working_directory"`
	TimeLimit    *wNoVal  `json:"time_limit"`
	SubmitTime   *wNoVal  `json:"submit_time"`
	EligibleTime *wNoVal  `json:"eligible_time"`
	StartTime    *wNoVal  `json:"start_time"`
	EndTime      *wNoVal  `json:"end_time"`
}

func (w wJob) job() Job {
	return Job{
		ID: w.JobID, Name: w.Name, User: w.UserName, Account: w.Account, Partition: w.Partition,
		QOS: w.QOS, State: w.JobState, Reason: w.StateReason, Hold: w.Hold, Priority: w.Priority.limit(),
		TRESPerNode: w.TRESPerNode, TRESPerJob: w.TRESPerJob, TRESRequested: w.TRESReqStr, TRESAllocated: w.TRESAllocStr,
		NodeCount: w.NodeCount.limit(), ArrayJobID: w.ArrayJobID.limit(), ArrayTaskString: w.ArrayTasks,
		Nodes: w.Nodes, Reservation: w.ResvName, Comment: w.Comment, AdminComment: w.AdminComment,
		WorkDir: w.CWD, TimeLimitMinutes: w.TimeLimit.limit(), SubmitTime: w.SubmitTime.time(),
		EligibleTime: w.EligibleTime.time(), StartTime: w.StartTime.time(), EndTime: w.EndTime.time(),
	}
}

type jobsResp struct {
	envelope
	Jobs []wJob `json:"jobs"`
}

// ListJobs returns the jobs slurmctld holds that match f, from one request
// (GET /slurm/{v}/jobs/). All pending jobs: JobFilter{States: []string{"PENDING"}}.
func (c *Client) ListJobs(ctx context.Context, f JobFilter) ([]Job, error) {
	var resp jobsResp
	if err := c.do(ctx, http.MethodGet, c.slurmPath("jobs/"), nil, nil, &resp); err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	var out []Job
	for _, w := range resp.Jobs {
		if j := w.job(); f.match(j) {
			out = append(out, j)
		}
	}
	return out, nil
}

// GetJob returns one job (GET /slurm/{v}/job/{id}); ErrNotFound when
// slurmctld no longer knows it (see ListDBJobs for finished jobs).
func (c *Client) GetJob(ctx context.Context, id int64) (Job, error) {
	var resp jobsResp
	if err := c.do(ctx, http.MethodGet, c.slurmPath("job/%d", id), nil, nil, &resp); err != nil {
		return Job{}, fmt.Errorf("get job %d: %w", id, err)
	}
	for _, w := range resp.Jobs {
		if w.JobID == id {
			return w.job(), nil
		}
	}
	return Job{}, fmt.Errorf("get job %d: %w", id, ErrNotFound)
}

// JobSpec describes a batch job to submit.
type JobSpec struct {
	Name        string
	Account     string
	Partition   string
	QOS         string
	Reservation string
	// TRESPerNode is the --gres equivalent, e.g. gres/gpu:1g.10gb:1.
	TRESPerNode string
	// Script is the batch script, starting with #!.
	Script string
	// TimeLimitMinutes: 0 takes the partition's default.
	TimeLimitMinutes int64
	// Environment is NAME=value pairs; empty gives PATH=/bin:/usr/bin
	// (slurmrestd requires some environment).
	Environment  []string
	WorkDir      string // current_working_directory; empty gives /tmp
	Comment      string
	AdminComment string
	// BeginTime defers the job (--begin); zero means now.
	BeginTime time.Time
	// Hold submits the job held (--hold).
	Hold            bool
	Nodes           int // minimum node count; 0 = Slurm's default (1)
	CPUsPerTask     int
	MemoryPerNodeMB int64
	StdOut, StdErr  string
	// RequiredNodes: the job runs on exactly these nodes (--nodelist).
	RequiredNodes []string
}

func (s JobSpec) validate() error {
	switch {
	case s.Script == "":
		return fmt.Errorf("%w: job script is empty", ErrInvalid)
	case !strings.HasPrefix(s.Script, "#!"):
		return fmt.Errorf("%w: job script must start with #! (an interpreter line)", ErrInvalid)
	case s.TimeLimitMinutes < 0 || s.Nodes < 0 || s.CPUsPerTask < 0 || s.MemoryPerNodeMB < 0:
		return fmt.Errorf("%w: time limit, nodes, CPUs per task and memory must be >= 0", ErrInvalid)
	}
	return nil
}

type wJobDesc struct {
	Name         string   `json:"name,omitempty"`
	Account      string   `json:"account,omitempty"`
	Partition    string   `json:"partition,omitempty"`
	QOS          string   `json:"qos,omitempty"`
	Reservation  string   `json:"reservation,omitempty"`
	TRESPerNode  string   `json:"tres_per_node,omitempty"`
	Script       string   `json:"script,omitempty"`
	TimeLimit    *wNoVal  `json:"time_limit,omitempty"`
	Environment  []string `json:"environment,omitempty"`
	CWD          string   `json:"current_working_directory,omitempty"`
	Comment      *string  `json:"comment,omitempty"`
	AdminComment *string  `json:"admin_comment,omitempty"`
	BeginTime    *wNoVal  `json:"begin_time,omitempty"`
	Hold         *bool    `json:"hold,omitempty"`
	Nodes        string   `json:"nodes,omitempty"`
	NodeList     []string `json:"required_nodes,omitempty"`
	CPUsPerTask  int      `json:"cpus_per_task,omitempty"`
	MemPerNode   *wNoVal  `json:"memory_per_node,omitempty"`
	StdOut       string   `json:"standard_output,omitempty"`
	StdErr       string   `json:"standard_error,omitempty"`
}

type submitResp struct {
	envelope
	JobID   int64  `json:"job_id"`
	StepID  string `json:"step_id"`
	UserMsg string `json:"job_submit_user_msg"`
}

// SubmitResult is what Slurm answered to a submission.
type SubmitResult struct {
	JobID       int64
	UserMessage string // job_submit_user_msg (from job_submit plugins)
	Warnings    []string
}

// SubmitJob submits a batch job (POST /slurm/{v}/job/submit) as the
// client's user; use c.As(user).SubmitJob to submit on behalf of a user.
func (c *Client) SubmitJob(ctx context.Context, s JobSpec) (SubmitResult, error) {
	if err := s.validate(); err != nil {
		return SubmitResult{}, fmt.Errorf("submit job: %w", err)
	}
	d := wJobDesc{
		Name: s.Name, Account: s.Account, Partition: s.Partition, QOS: s.QOS, Reservation: s.Reservation,
		TRESPerNode: s.TRESPerNode, Script: s.Script, Environment: s.Environment, CWD: s.WorkDir,
		CPUsPerTask: s.CPUsPerTask, StdOut: s.StdOut, StdErr: s.StdErr, NodeList: s.RequiredNodes,
	}
	if len(d.Environment) == 0 {
		d.Environment = []string{"PATH=/bin:/usr/bin"}
	}
	if d.CWD == "" {
		d.CWD = "/tmp"
	}
	if d.Name == "" {
		d.Name = "gpubridge"
	}
	if s.TimeLimitMinutes > 0 {
		d.TimeLimit = num(s.TimeLimitMinutes)
	}
	if s.Comment != "" {
		d.Comment = &s.Comment
	}
	if s.AdminComment != "" {
		d.AdminComment = &s.AdminComment
	}
	if !s.BeginTime.IsZero() {
		d.BeginTime = num(s.BeginTime.Unix())
	}
	if s.Hold {
		t := true
		d.Hold = &t
	}
	if s.Nodes > 0 {
		d.Nodes = strconv.Itoa(s.Nodes)
	}
	if s.MemoryPerNodeMB > 0 {
		d.MemPerNode = num(s.MemoryPerNodeMB)
	}
	var resp submitResp
	if err := c.do(ctx, http.MethodPost, c.slurmPath("job/submit"), nil, struct {
		Job wJobDesc `json:"job"`
	}{d}, &resp); err != nil {
		return SubmitResult{}, fmt.Errorf("submit job as %s: %w", c.User(), err)
	}
	r := SubmitResult{JobID: resp.JobID, UserMessage: resp.UserMsg}
	for _, w := range resp.Warnings {
		r.Warnings = append(r.Warnings, w.Description)
	}
	return r, nil
}

// JobUpdate changes a job; nil fields are left as they are.
type JobUpdate struct {
	Partition    *string
	QOS          *string
	Comment      *string
	AdminComment *string
	// Hold true holds a pending job, false releases it.
	Hold *bool
}

type jobPostResp struct {
	envelope
	Results []struct {
		JobID     int64  `json:"job_id"`
		StepID    string `json:"step_id"`
		Error     string `json:"error"`
		ErrorCode int    `json:"error_code"`
		Why       string `json:"why"`
	} `json:"results"`
}

// UpdateJob changes a job (POST /slurm/{v}/job/{id}). Slurm lets the job's
// owner and operators change a pending job's partition and QOS.
func (c *Client) UpdateJob(ctx context.Context, id int64, u JobUpdate) error {
	d := wJobDesc{Comment: u.Comment, AdminComment: u.AdminComment, Hold: u.Hold}
	if u.Partition != nil {
		if *u.Partition == "" {
			return fmt.Errorf("update job %d: %w: empty partition", id, ErrInvalid)
		}
		d.Partition = *u.Partition
	}
	if u.QOS != nil {
		if *u.QOS == "" {
			return fmt.Errorf("update job %d: %w: empty QOS", id, ErrInvalid)
		}
		d.QOS = *u.QOS
	}
	if u == (JobUpdate{}) {
		return fmt.Errorf("update job %d: %w: nothing to change", id, ErrInvalid)
	}
	var resp jobPostResp
	path, err := c.versioned(ctx, c.slurmPath("job/%d", id))
	if err != nil {
		return fmt.Errorf("update job %d: %w", id, err)
	}
	if err := c.do(ctx, http.MethodPost, path, nil, d, &resp); err != nil {
		return fmt.Errorf("update job %d: %w", id, err)
	}
	for _, r := range resp.Results {
		if r.ErrorCode != 0 {
			return fmt.Errorf("update job %d: %w", id, &SlurmError{Method: http.MethodPost, Path: path, HTTPStatus: http.StatusOK,
				Errors: []ErrorDetail{{Number: r.ErrorCode, Text: r.Error, Description: r.Why}}})
		}
	}
	return nil
}

type killResp struct {
	envelope
	Status []struct {
		Error struct {
			String  string `json:"string"`
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		StepID string  `json:"step_id"`
		JobID  *wNoVal `json:"job_id"`
	} `json:"status"`
}

// CancelJob cancels a job (DELETE /slurm/{v}/job/{id}, SIGKILL).
func (c *Client) CancelJob(ctx context.Context, id int64) error {
	var resp killResp
	path, err := c.versioned(ctx, c.slurmPath("job/%d", id))
	if err != nil {
		return fmt.Errorf("cancel job %d: %w", id, err)
	}
	if err := c.do(ctx, http.MethodDelete, path, nil, nil, &resp); err != nil {
		return fmt.Errorf("cancel job %d: %w", id, err)
	}
	for _, s := range resp.Status {
		if s.Error.Code != 0 {
			return fmt.Errorf("cancel job %d: %w", id, &SlurmError{Method: http.MethodDelete, Path: path, HTTPStatus: http.StatusOK,
				Errors: []ErrorDetail{{Number: s.Error.Code, Text: s.Error.String, Description: s.Error.Message}}})
		}
	}
	return nil
}
