package billing

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/slurmstr"
)

// RunEnd is how a finished run ended, as Slurm's accounting recorded it.
type RunEnd struct {
	Key     meter.RunKey
	Account string
	State   string // COMPLETED, NODE_FAIL, CANCELLED, FAILED, TIMEOUT, ...
	Nodes   []string
	Start   int64
	End     int64
}

// RunEnds reads the end states the ledger does not keep (SlurmDBEnds).
type RunEnds interface {
	// AbnormalEnds returns the runs that started and ended in [from, to)
	// in a state other than COMPLETED.
	AbnormalEnds(ctx context.Context, from, to time.Time) ([]RunEnd, error)
}

// SlurmDBEnds reads how runs ended from slurmdbd's job table, through the
// read-only user the ingest uses (config slurmdb.dsn).
type SlurmDBEnds struct {
	DB      *sqlx.DB
	Cluster string
}

var _ RunEnds = SlurmDBEnds{}

var endsCluster = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// jobStates are Slurm's base job states (enum job_states, the low byte of
// job_table.state).
var jobStates = []string{"PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL",
	"PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"}

// JobStateName names a job_table.state value (its base state); an unknown
// one reads as STATE_<n>.
func JobStateName(state int64) string {
	if b := state & 0xff; b >= 0 && int(b) < len(jobStates) {
		return jobStates[b]
	}
	return fmt.Sprintf("STATE_%d", state&0xff)
}

// AbnormalEnds implements RunEnds: the runs that started and ended in
// [from, to) in a state other than COMPLETED, with their nodes and the
// account of their association.
func (s SlurmDBEnds) AbnormalEnds(ctx context.Context, from, to time.Time) ([]RunEnd, error) {
	if !endsCluster.MatchString(s.Cluster) {
		return nil, fmt.Errorf("cluster name %q cannot name slurmdbd tables", s.Cluster)
	}
	var rows []struct {
		JobID    uint32 `db:"id_job"`
		Submit   int64  `db:"time_submit"`
		Start    int64  `db:"time_start"`
		End      int64  `db:"time_end"`
		State    int64  `db:"state"`
		NodeList string `db:"nodelist"`
		Account  string `db:"account"`
	}
	q := "SELECT t.id_job, t.time_submit, t.time_start, t.time_end, t.state, COALESCE(t.nodelist, '') AS nodelist, " +
		"COALESCE(NULLIF(a.acct, ''), t.account, '') AS account FROM `" + s.Cluster + "_job_table` t " +
		"LEFT JOIN `" + s.Cluster + "_assoc_table` a ON a.id_assoc = t.id_assoc " +
		"WHERE t.time_end >= ? AND t.time_end < ? AND t.time_start > 0 AND (t.state & 255) <> 3"
	if err := s.DB.SelectContext(ctx, &rows, q, from.Unix(), to.Unix()); err != nil {
		return nil, fmt.Errorf("slurm_acct_db: read the runs that ended abnormally: %w", err)
	}
	out := make([]RunEnd, 0, len(rows))
	for _, r := range rows {
		var nodes []string
		if nl := strings.TrimSpace(r.NodeList); nl != "" && nl != "None assigned" {
			var err error
			if nodes, err = slurmstr.ExpandHostlist(nl); err != nil {
				return nil, fmt.Errorf("slurm_acct_db: job %d: node list %q: %w", r.JobID, nl, err)
			}
		}
		out = append(out, RunEnd{Key: meter.RunKey{Cluster: s.Cluster, JobID: r.JobID, Submit: r.Submit}, Account: r.Account,
			State: JobStateName(r.State), Nodes: nodes, Start: r.Start, End: r.End})
	}
	return out, nil
}

// RESTEnds reads how runs ended from slurmrestd's job records (GET
// /slurmdb/{v}/jobs/ with a state filter), for sites whose ingest reads
// slurmrestd (no slurmdb.dsn).
type RESTEnds struct {
	Slurm   ingest.DBJobLister
	Cluster string
}

var _ RunEnds = RESTEnds{}

// abnormalStates are the end states RESTEnds asks slurmdbd for.
var abnormalStates = []string{"CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"}

// AbnormalEnds implements RunEnds.
func (s RESTEnds) AbnormalEnds(ctx context.Context, from, to time.Time) ([]RunEnd, error) {
	jobs, err := s.Slurm.ListDBJobs(ctx, slurmrest.DBJobFilter{Start: from, End: to, States: abnormalStates, ShowDuplicates: true,
		SkipSteps: true, NoTruncate: true})
	if err != nil {
		return nil, fmt.Errorf("slurmrestd: read the runs that ended abnormally: %w", err)
	}
	var out []RunEnd
	for _, j := range jobs {
		if j.StartTime.IsZero() || j.EndTime.IsZero() || j.EndTime.Before(from) || !j.EndTime.Before(to) || len(j.State) == 0 ||
			j.State[0] == "COMPLETED" || (j.Cluster != "" && j.Cluster != s.Cluster) {
			continue
		}
		var nodes []string
		if nl := strings.TrimSpace(j.Nodes); nl != "" && nl != "None assigned" {
			if nodes, err = slurmstr.ExpandHostlist(nl); err != nil {
				return nil, fmt.Errorf("slurmrestd: job %d: node list %q: %w", j.JobID, nl, err)
			}
		}
		out = append(out, RunEnd{Key: meter.RunKey{Cluster: s.Cluster, JobID: uint32(j.JobID), Submit: j.SubmitTime.Unix()}, Account: j.Account,
			State: j.State[0], Nodes: nodes, Start: j.StartTime.Unix(), End: j.EndTime.Unix()})
	}
	return out, nil
}
