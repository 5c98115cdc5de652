package billing

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/ledger/ledgertest"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

type lister struct {
	got  slurmrest.DBJobFilter
	jobs []slurmrest.DBJob
}

func (l *lister) ListDBJobs(_ context.Context, f slurmrest.DBJobFilter) ([]slurmrest.DBJob, error) {
	l.got = f
	return l.jobs, nil
}

// TestRESTEnds: slurmrestd's records of the window's abnormal ends, asked
// for with every run of a requeued job and untruncated times; a run that
// never started, ended outside the window or COMPLETED is left out.
func TestRESTEnds(t *testing.T) {
	from, to := time.Unix(ledgertest.TS("2026-11-15 00:00:00"), 0), time.Unix(ledgertest.TS("2026-11-16 00:00:00"), 0)
	at := func(s string) time.Time { return time.Unix(ledgertest.TS(s), 0) }
	l := &lister{jobs: []slurmrest.DBJob{
		{JobID: 1, Account: "acme", State: []string{"NODE_FAIL"}, Nodes: "gpu-a,gpu-b", SubmitTime: at("2026-11-15 00:00:00"), StartTime: at("2026-11-15 00:01:00"), EndTime: at("2026-11-15 02:00:00")},
		{JobID: 2, Account: "acme", State: []string{"CANCELLED"}, Nodes: "None assigned", SubmitTime: at("2026-11-15 00:00:00"), EndTime: at("2026-11-15 02:00:00")},
		{JobID: 3, Account: "acme", State: []string{"FAILED"}, Nodes: "gpu-a", SubmitTime: at("2026-11-14 00:00:00"), StartTime: at("2026-11-14 00:01:00"), EndTime: at("2026-11-14 02:00:00")},
		{JobID: 4, Account: "acme", State: []string{"COMPLETED"}, Nodes: "gpu-a", SubmitTime: at("2026-11-15 00:00:00"), StartTime: at("2026-11-15 00:01:00"), EndTime: at("2026-11-15 02:00:00")},
	}}
	got, err := RESTEnds{Slurm: l, Cluster: cluster}.AbnormalEnds(context.Background(), from, to)
	if err != nil {
		t.Fatal(err)
	}
	want := []RunEnd{{Key: meter.RunKey{Cluster: cluster, JobID: 1, Submit: ledgertest.TS("2026-11-15 00:00:00")}, Account: "acme", State: "NODE_FAIL",
		Nodes: []string{"gpu-a", "gpu-b"}, Start: ledgertest.TS("2026-11-15 00:01:00"), End: ledgertest.TS("2026-11-15 02:00:00")}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	if !l.got.ShowDuplicates || !l.got.NoTruncate || !slices.Contains(l.got.States, "NODE_FAIL") || slices.Contains(l.got.States, "COMPLETED") {
		t.Errorf("filter %+v", l.got)
	}
	for state, want := range map[int64]string{3: "COMPLETED", 7: "NODE_FAIL", 4 | 0x400: "CANCELLED", 200: "STATE_200"} {
		if got := JobStateName(state); got != want {
			t.Errorf("JobStateName(%d) = %s, want %s", state, got, want)
		}
	}
}
