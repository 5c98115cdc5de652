package health

import (
	"bytes"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health/check"
	"github.com/gpubridge/gpubridge/internal/table"
)

func TestHealthTables(t *testing.T) {
	at := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	rs := []StoredResult{{RunID: 7, Node: "gpu-a", Check: "nccl-1node", Verdict: check.Fail, Reason: "busbw_gbps=155.79 < 350 (h100)",
		Values: []check.Value{{Name: "busbw_gbps", Value: 155.79}, {Name: "x", GPU: "1", Value: 2}}, Start: at, End: at.Add(90 * time.Second),
		ExitCode: 0, JobID: 42, Tenant: "acme", Purpose: PurposeTenant, At: at.Add(2 * time.Minute)}}
	var b bytes.Buffer
	if err := table.Write(&b, table.Options{Parsable: true}, ResultsTable(rs)); err != nil {
		t.Fatal(err)
	}
	want := "At|Run|Node|Check|Verdict|Reason|Values|Duration|JobID|Tenant|Purpose\n" +
		"2026-06-01T08:02:00Z|7|gpu-a|nccl-1node|fail|busbw_gbps=155.79 < 350 (h100)|busbw_gbps=155.79 GPU 1 x=2|1m30s|42|acme|tenant\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	rep := Report{
		Events:    []Event{{Node: "gpu-a", To: BurnIn, Reason: "acceptance checks pending"}},
		Actions:   []Action{{Kind: ActDrain, Node: "gpu-a", Reason: "gpubridge: burn-in (0/1 passed): acceptance checks pending"}},
		Submitted: []Run{{ID: 1, Node: "gpu-a", Checks: []string{"xid", "dcgm-r2"}, JobID: 9}},
		Skipped:   map[string]string{"gpu-b": "not idle"},
	}
	b.Reset()
	if err := table.Write(&b, table.Options{Parsable: true, NoHeader: true}, ReportTable(rep)); err != nil {
		t.Fatal(err)
	}
	want = "state|gpu-a|new -> burn-in: acceptance checks pending\n" +
		"slurm|gpu-a|drain \"gpubridge: burn-in (0/1 passed): acceptance checks pending\"\n" +
		"submitted|gpu-a|run 1 (xid,dcgm-r2) job 9\n" +
		"skipped|gpu-b|not idle\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestRunsTableNamesBothNodesOfAPair(t *testing.T) {
	rows := RunsTable([]Run{{ID: 3, Node: "gpu-a", Peers: []string{"gpu-b"}, Checks: []string{"nccl-2node"}, Purpose: PurposeAdmin, JobID: 14, State: RunSubmitted}}).Rows
	if len(rows) != 1 || rows[0][1] != "gpu-a,gpu-b" {
		t.Errorf("rows %v", rows)
	}
}

// TestResumePrompt: resume node's confirmation names the node and says
// the override skips the requalify runs.
func TestResumePrompt(t *testing.T) {
	if got, want := ResumePrompt("gpu-a"), "Resume gpu-a now, without its requalify runs (audited)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
