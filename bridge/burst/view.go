package burst

import (
	"strconv"
	"time"

	"github.com/gpubridge/gpubridge/internal/table"
)

// ActionRow is one line of a cycle as `burst run-once` prints it (its
// --json objects): a move done (or, dry, one that would be), a move that
// failed, or a refusal.
type ActionRow struct {
	Action string `json:"action"`
	Tenant string `json:"tenant"`
	JobID  int64  `json:"jobId"`
	User   string `json:"user"`
	GPUs   string `json:"gpus"`
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

// CycleTable lays out what a cycle did (dry: what it would do).
func CycleTable(res Result, dry bool) table.Table {
	rows := []ActionRow{}
	moves, verb := res.Moved, "moved"
	if dry {
		moves, verb = res.Plan.Moves, "would-move"
	}
	for _, m := range moves {
		rows = append(rows, ActionRow{verb, m.Tenant, m.Job.ID, m.Job.User, m.GPUs.String(), m.Job.Reason,
			"to on-demand; est " + FormatMoney(m.Estimate, res.Plan.Minor)})
	}
	for _, f := range res.Failed {
		rows = append(rows, ActionRow{"failed", f.Tenant, f.JobID, f.User, f.GPUs.String(), string(f.Reason), f.Detail})
	}
	for _, r := range res.Plan.Refusals {
		rows = append(rows, ActionRow{"refused", r.Tenant, r.JobID, r.User, r.GPUs.String(), string(r.Reason), r.Detail})
	}
	t := table.Table{Header: []string{"Action", "Tenant", "JobID", "User", "GPUs", "Reason", "Detail"}, Raw: rows}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{r.Action, r.Tenant, strconv.FormatInt(r.JobID, 10), r.User, r.GPUs, r.Reason, r.Detail})
	}
	return t
}

// JobsTable is the overview's jobs: bursting, and refused with why.
func (ov Overview) JobsTable() table.Table {
	jobs := ov.Jobs
	if jobs == nil {
		jobs = []OverviewJob{}
	}
	t := table.Table{Header: []string{"Tenant", "JobID", "User", "Status", "State", "GPUs", "Since", "Reason", "Detail"}, Raw: jobs}
	for _, r := range jobs {
		s := ""
		if !r.Since.IsZero() {
			s = r.Since.UTC().Format(time.RFC3339)
		}
		t.Rows = append(t.Rows, []string{r.Tenant, strconv.FormatInt(r.JobID, 10), r.User, r.Status, r.State, r.GPUs, s, r.Reason, r.Detail})
	}
	return t
}

// TenantsTable is the overview's tenants: cap and budget against use. A
// tenant without a budget shows "none" and "-" left.
func (ov Overview) TenantsTable() table.Table {
	tenants := ov.Tenants
	if tenants == nil {
		tenants = []OverviewTenant{}
	}
	t := table.Table{Header: []string{"Tenant", "Burst", "MaxOnDemandGPUs", "OnDemandGPUs", "MonthlyBudget", "Spent", "InFlight", "Committed", "Left"}, Raw: tenants}
	for _, r := range tenants {
		onoff := "off"
		if r.Burst {
			onoff = "on"
		}
		budget, left := r.Budget, r.Left
		if budget == "" {
			budget, left = "none", "-"
		}
		t.Rows = append(t.Rows, []string{r.Tenant, onoff, strconv.FormatInt(r.Cap, 10), strconv.FormatInt(r.OnDemandGPUs, 10),
			budget, r.Spent, r.InFlight, r.Committed, left})
	}
	return t
}

// Views are the tables show burst prints of ov for the output options o:
// the one which names ("jobs", "tenants"); else both (aligned text), the
// whole overview (--json), or, for -P, -p, format= and where, the jobs
// table with a note that says so.
func (ov Overview) Views(which string, o table.Options) (ts []table.Table, note string) {
	one := o.Parsable || o.Trailing || o.Format != nil || o.Where != nil
	switch {
	case which == "tenants":
		return []table.Table{ov.TenantsTable()}, ""
	case which == "jobs":
		return []table.Table{ov.JobsTable()}, ""
	case o.JSON && !one:
		return []table.Table{{Raw: ov}}, ""
	case one || o.JSON:
		return []table.Table{ov.JobsTable()}, "show burst: the jobs table (table=tenants prints the tenants' caps and budgets)"
	}
	return []table.Table{ov.JobsTable(), ov.TenantsTable()}, ""
}
