package slurmrest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// JobState is one job as GET jobs/state/ reports it: its id (an array
// task as 123_4) and state, nothing else (no reason, account or TRES).
type JobState struct {
	ID    string
	State []string
}

type wJobState struct {
	JobID string   `json:"job_id"`
	State []string `json:"state"`
}

type jobStatesResp struct {
	envelope
	Jobs []wJobState `json:"jobs"`
}

// ListJobStates returns the state of every job slurmctld holds, or of
// the given ones (GET /slurm/{v}/jobs/state/?job_id=1&job_id=2: slurmrestd
// 26.05 refuses the comma-separated list its OpenAPI describes): a much
// lighter read than ListJobs, but without the state reason, so it cannot
// tell a quota-held job from any other pending one.
func (c *Client) ListJobStates(ctx context.Context, ids ...string) ([]JobState, error) {
	var query url.Values
	if len(ids) > 0 {
		query = url.Values{"job_id": ids}
	}
	var resp jobStatesResp
	if err := c.do(ctx, http.MethodGet, c.slurmPath("jobs/state/"), query, nil, &resp); err != nil {
		return nil, fmt.Errorf("list job states: %w", err)
	}
	out := make([]JobState, len(resp.Jobs))
	for i, j := range resp.Jobs {
		out[i] = JobState{ID: j.JobID, State: j.State}
	}
	return out, nil
}
