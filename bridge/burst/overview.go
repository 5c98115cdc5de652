package burst

import (
	"fmt"
	"slices"
	"time"
)

// StoredRefusal is a refusal as the Store keeps it, with since when it holds
// (FirstAt: the first cycle that refused the job for this reason).
type StoredRefusal struct {
	Refusal
	GPUs    string
	FirstAt time.Time
	LastAt  time.Time
}

// Overview is what `gpubridge show burst` shows: the jobs in the on-demand
// tier and the quota-held jobs left pending, and each tenant's on-demand
// position. Amounts are formatted in the currency's minor unit, as printed.
type Overview struct {
	Jobs    []OverviewJob    `json:"jobs"`
	Tenants []OverviewTenant `json:"tenants"`
}

// OverviewJob is one job of the overview: bursting now, or refused.
type OverviewJob struct {
	Tenant string    `json:"tenant"`
	JobID  int64     `json:"jobId"`
	User   string    `json:"user"`
	Status string    `json:"status"` // bursting, refused
	State  string    `json:"state"`  // Slurm state
	GPUs   string    `json:"gpus"`
	Since  time.Time `json:"since,omitzero"`
	Reason string    `json:"reason"`
	Detail string    `json:"detail"`
}

// OverviewTenant is one tenant of the overview: its policy and position.
type OverviewTenant struct {
	Tenant       string `json:"tenant"`
	Burst        bool   `json:"burst"`
	Cap          int64  `json:"maxOnDemandGPUs"`
	OnDemandGPUs int64  `json:"onDemandGPUs"`
	Budget       string `json:"monthlyBudget,omitempty"`
	Spent        string `json:"spent"`
	InFlight     string `json:"inFlight"`
	Committed    string `json:"committed"`
	Left         string `json:"left,omitempty"`
}

// Summarize merges a plan (the live decision, which writes nothing) with
// the stored refusals into the overview, of tenant only when it is not
// empty. A refused job's Since is the first refusal with its current
// reason; moves that failed are only known to the cycle that tried, so the
// stored ones are added. An unknown tenant is an error.
func Summarize(p Plan, stored []StoredRefusal, only string) (Overview, error) {
	since := map[int64]StoredRefusal{}
	for _, s := range stored {
		since[s.JobID] = s
	}
	var jobs []OverviewJob
	for _, b := range p.Bursting {
		if only != "" && b.Tenant != only {
			continue
		}
		r := OverviewJob{Tenant: b.Tenant, JobID: b.JobID, User: b.User, Status: "bursting", State: b.State, GPUs: b.GPUs.String()}
		if b.Moved {
			r.Since, r.Reason = b.Marker.Moved, b.Marker.Reason
			r.Detail = fmt.Sprintf("moved by gpubridge from %s/%s", b.Marker.Partition, b.Marker.QOS)
		} else {
			r.Since, r.Reason, r.Detail = b.StartTime, "submitted", "submitted to the on-demand tier"
		}
		if b.Priced {
			r.Detail += "; est " + FormatMoney(b.Estimate, p.Minor)
		}
		if b.Reason != "" && b.Reason != "None" {
			r.Detail += "; pending: " + b.Reason
		}
		jobs = append(jobs, r)
	}
	for _, x := range p.Refusals {
		if only != "" && x.Tenant != only {
			continue
		}
		r := OverviewJob{Tenant: x.Tenant, JobID: x.JobID, User: x.User, Status: "refused", State: "PENDING",
			GPUs: x.GPUs.String(), Reason: string(x.Reason), Detail: x.Detail}
		if s, ok := since[x.JobID]; ok && s.Reason == x.Reason {
			r.Since = s.FirstAt
		}
		jobs = append(jobs, r)
	}
	// Move failures are only known to the cycle that tried: show stored ones.
	for _, s := range stored {
		if s.Reason == MoveFailed && !slices.ContainsFunc(jobs, func(r OverviewJob) bool { return r.JobID == s.JobID }) {
			jobs = append(jobs, OverviewJob{Tenant: s.Tenant, JobID: s.JobID, User: s.User, Status: "refused", State: "PENDING",
				GPUs: s.GPUs, Since: s.FirstAt, Reason: string(s.Reason), Detail: s.Detail})
		}
	}
	var tenants []OverviewTenant
	for _, t := range p.Tenants {
		if only != "" && t.Tenant != only {
			continue
		}
		r := OverviewTenant{Tenant: t.Tenant, Burst: t.Enabled, Cap: t.MaxGPUs, OnDemandGPUs: t.OnDemandGPUs + t.MovedGPUs,
			Spent: FormatMoney(t.Spent, p.Minor), InFlight: FormatMoney(t.InFlight, p.Minor),
			Committed: FormatMoney(t.Committed(), p.Minor)}
		if t.Budget != nil {
			r.Budget = t.Budget.String()
			r.Left = FormatMoney(t.Budget.Units()-t.Committed(), p.Minor)
			if t.BudgetErr != "" {
				r.Left = "-" // the budget cannot be counted in the card's currency (the refusals say why)
			}
		}
		if t.Unpriced != "" {
			r.InFlight += " (+" + t.Unpriced + " unpriced)"
		}
		tenants = append(tenants, r)
	}
	if only != "" && len(tenants) == 0 {
		return Overview{}, fmt.Errorf("no tenant %q", only)
	}
	if jobs == nil {
		jobs = []OverviewJob{}
	}
	if tenants == nil {
		tenants = []OverviewTenant{}
	}
	return Overview{Jobs: jobs, Tenants: tenants}, nil
}
