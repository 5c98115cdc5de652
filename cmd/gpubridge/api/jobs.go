package api

import (
	"net/http"
	"time"

	"github.com/gpubridge/gpubridge/bridge/burst"
)

// The burst and pending-jobs routes: read from the snapshot.

// burstView is `show burst tenant=NAME` as JSON.
type burstView struct {
	Tenant string               `json:"tenant"`
	AsOf   time.Time            `json:"asOf"`
	Policy burst.OverviewTenant `json:"policy"`
	Jobs   []burst.OverviewJob  `json:"jobs"`
}

func (s *Server) burst(q *req) (int, any, error) {
	if _, ok := q.snap.PartAt[PartBurst]; !ok {
		return 0, nil, errUnavailable
	}
	ov, err := burst.Summarize(q.snap.Plan, q.snap.Stored, q.tenant)
	if err != nil {
		return 0, nil, errUnavailable // a tenant the last plan did not know yet
	}
	return http.StatusOK, burstView{Tenant: q.tenant, AsOf: q.snap.At, Policy: ov.Tenants[0], Jobs: ov.Jobs}, nil
}

// PendingJob is one of a tenant's pending jobs, with why it waits.
type PendingJob struct {
	ID         int64     `json:"id"`
	Name       string    `json:"name"`
	User       string    `json:"user"`
	Partition  string    `json:"partition"`
	QOS        string    `json:"qos"`
	GPUs       string    `json:"gpus"`
	Tasks      int64     `json:"tasks"`
	SubmitTime time.Time `json:"submitTime,omitzero"`
	// Reason is Slurm's state reason.
	Reason string `json:"reason"`
	// QuotaHold is true when the job waits for its tenant's quota.
	QuotaHold bool `json:"quotaHold"`
	// Burst says what the burst controller does with the job: move (its
	// next cycle moves it to the on-demand tier), refused (it stays: see
	// BurstReason and BurstDetail), on-demand (it waits in the on-demand
	// tier already), none (not held by the quota, or the quota has room).
	Burst       string `json:"burst"`
	BurstReason string `json:"burstReason,omitempty"`
	BurstDetail string `json:"burstDetail,omitempty"`
}

func (s *Server) pendingJobs(q *req) (int, any, error) {
	if _, ok := q.snap.PartAt[PartJobs]; !ok {
		return 0, nil, errUnavailable
	}
	limit, err := rowLimit(q)
	if err != nil {
		return 0, nil, err
	}
	out, more := pendingRows(q.snap, q.tenant, limit)
	return http.StatusOK, map[string]any{"tenant": q.tenant, "asOf": q.snap.At, "jobs": out, "more": more}, nil
}

// pendingRows are the tenant's pending jobs (at most limit; more says
// there are others) with what the burst plan does with each: the
// pending-jobs route's and the jobs page's rows.
func pendingRows(snap *Snapshot, tenant string, limit int) ([]PendingJob, bool) {
	moves := map[int64]bool{}
	for _, m := range snap.Plan.Moves {
		moves[m.Job.ID] = true
	}
	refused := map[int64]burst.Refusal{}
	for _, r := range snap.Plan.Refusals {
		refused[r.JobID] = r
	}
	bursting := map[int64]bool{}
	for _, b := range snap.Plan.Bursting {
		bursting[b.JobID] = true
	}
	out, more := []PendingJob{}, false
	for _, j := range snap.Jobs[tenant] {
		if !j.Pending() {
			continue
		}
		if len(out) == limit {
			more = true
			break
		}
		p := PendingJob{ID: j.ID, Name: j.Name, User: j.User, Partition: j.Partition, QOS: j.QOS, GPUs: j.GPUs.String(),
			Tasks: max(j.Tasks, 1), SubmitTime: j.SubmitTime, Reason: j.Reason, QuotaHold: burst.IsQuotaHold(j.Reason), Burst: "none"}
		switch r, ok := refused[j.ID]; {
		case moves[j.ID]:
			p.Burst = "move"
		case ok:
			p.Burst, p.BurstReason, p.BurstDetail = "refused", string(r.Reason), r.Detail
		case bursting[j.ID]:
			p.Burst = "on-demand"
		}
		out = append(out, p)
	}
	return out, more
}
