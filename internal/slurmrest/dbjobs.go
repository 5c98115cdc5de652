package slurmrest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DBJob is one job run as slurmdbd recorded it. A requeued job has one
// record per run when ShowDuplicates is set; (JobID, SubmitTime) tells the
// runs apart.
type DBJob struct {
	JobID         int64
	Name          string
	Cluster       string
	Account       string
	User          string
	Partition     string
	QOS           string
	State         []string // e.g. [COMPLETED]
	Reason        string
	Flags         []string
	Nodes         string
	Reservation   string
	SubmitTime    time.Time
	EligibleTime  time.Time
	StartTime     time.Time // zero if it never started
	EndTime       time.Time // zero while running
	Elapsed       time.Duration
	TRESAllocated []TRES // typed: {gres gpu:1g.10gb 1002 1}; counts may hold Slurm's NO_VAL markers (e.g. energy -2)
	TRESRequested []TRES
	ExitStatus    []string // e.g. [SUCCESS]
	ExitCode      Limit
	RestartCount  int
	Comment       string
	AdminComment  string
	SystemComment string
}

// DBJobFilter selects slurmdbd job records.
type DBJobFilter struct {
	// Start and End bound the window: jobs that were eligible or running
	// in [Start, End] (sacct -S/-E semantics). Both required.
	Start, End time.Time
	Users      []string
	Accounts   []string
	Partitions []string
	QOS        []string
	States     []string
	// ShowDuplicates returns every run of a requeued job (sacct -D).
	ShowDuplicates bool
	// SkipSteps leaves out job steps (the response is much smaller).
	SkipSteps bool
	// NoTruncate returns each job's real start and end times. Without it
	// slurmdbd clips them to [Start, End] (sacct -T is the opposite), which
	// silently undercounts usage of a job that crosses the window's edge.
	NoTruncate bool
}

type wDBJob struct {
	JobID       int64    `json:"job_id"`
	Name        string   `json:"name"`
	Cluster     string   `json:"cluster"`
	Account     string   `json:"account"`
	User        string   `json:"user"`
	Partition   string   `json:"partition"`
	QOS         string   `json:"qos"`
	Nodes       string   `json:"nodes"`
	Flags       []string `json:"flags"`
	RestartCnt  int      `json:"restart_cnt"`
	Reservation struct {
		Requested string `json:"requested"`
	} `json:"reservation"`
	Association struct {
		Account string `json:"account"`
		User    string `json:"user"`
	} `json:"association"`
	Comment struct {
		Administrator string `json:"administrator"`
		Job           string `json:"job"`
		System        string `json:"system"`
	} `json:"comment"`
	State struct {
		Current []string `json:"current"`
		Reason  string   `json:"reason"`
	} `json:"state"`
	Time struct {
		Elapsed    int64 `json:"elapsed"`
		Eligible   int64 `json:"eligible"`
		End        int64 `json:"end"`
		Start      int64 `json:"start"`
		Submission int64 `json:"submission"`
	} `json:"time"`
	ExitCode struct {
		Status     []string `json:"status"`
		ReturnCode *wNoVal  `json:"return_code"`
	} `json:"exit_code"`
	TRES struct {
		Allocated []wTRES `json:"allocated"`
		Requested []wTRES `json:"requested"`
	} `json:"tres"`
}

type dbJobsResp struct {
	envelope
	Jobs []wDBJob `json:"jobs"`
}

// ListDBJobs returns the job records of a time window from slurmdbd
// (GET /slurmdb/{v}/jobs/). Keep windows small (hours, not months): the
// REST path is slow for large ones (see docs/slurmrest.md).
func (c *Client) ListDBJobs(ctx context.Context, f DBJobFilter) ([]DBJob, error) {
	if f.Start.IsZero() || f.End.IsZero() || !f.End.After(f.Start) {
		return nil, fmt.Errorf("list slurmdb jobs: %w: need a window with Start before End", ErrInvalid)
	}
	q := url.Values{
		"start_time": {strconv.FormatInt(f.Start.Unix(), 10)},
		"end_time":   {strconv.FormatInt(f.End.Unix(), 10)},
	}
	if cluster := c.clusterFor(ctx); cluster != "" {
		q.Set("cluster", cluster)
	}
	add := func(k string, v []string) {
		if len(v) > 0 {
			q.Set(k, strings.Join(v, ","))
		}
	}
	add("users", f.Users)
	add("account", f.Accounts)
	add("partition", f.Partitions)
	add("qos", f.QOS)
	add("state", f.States)
	if f.ShowDuplicates {
		q.Set("show_duplicates", "true")
	}
	if f.SkipSteps {
		q.Set("skip_steps", "true")
	}
	if f.NoTruncate {
		q.Set("disable_truncate_usage_time", "true")
	}
	var resp dbJobsResp
	if err := c.do(ctx, http.MethodGet, c.dbPath("jobs/"), q, nil, &resp); err != nil {
		return nil, fmt.Errorf("list slurmdb jobs %s..%s: %w", f.Start.UTC().Format(time.RFC3339), f.End.UTC().Format(time.RFC3339), err)
	}
	out := make([]DBJob, 0, len(resp.Jobs))
	for _, w := range resp.Jobs {
		j := DBJob{
			JobID: w.JobID, Name: w.Name, Cluster: w.Cluster, Account: w.Account, User: w.User,
			Partition: w.Partition, QOS: w.QOS, State: w.State.Current, Reason: w.State.Reason,
			Flags: w.Flags, Nodes: w.Nodes, Reservation: w.Reservation.Requested,
			SubmitTime: unixTime(w.Time.Submission), EligibleTime: unixTime(w.Time.Eligible),
			StartTime: unixTime(w.Time.Start), EndTime: unixTime(w.Time.End),
			Elapsed:       time.Duration(w.Time.Elapsed) * time.Second,
			TRESAllocated: fromWireTRES(w.TRES.Allocated), TRESRequested: fromWireTRES(w.TRES.Requested),
			ExitStatus: w.ExitCode.Status, ExitCode: w.ExitCode.ReturnCode.limit(), RestartCount: w.RestartCnt,
			Comment: w.Comment.Job, AdminComment: w.Comment.Administrator, SystemComment: w.Comment.System,
		}
		if j.Account == "" {
			j.Account = w.Association.Account
		}
		if j.User == "" {
			j.User = w.Association.User
		}
		out = append(out, j)
	}
	return out, nil
}
