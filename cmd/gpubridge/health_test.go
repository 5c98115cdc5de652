package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/check"
	"github.com/gpubridge/gpubridge/internal/table"
)

func TestHealthCommandsRefuseBadInput(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "g.yaml")
	if err := os.WriteFile(conf, []byte("version: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		args []string
		code int
		msg  string
	}{
		"no node":          {[]string{"check", "node"}, 1, "requires at least 1 arg"},
		"two nodes":        {[]string{"check", "node", "a", "b"}, 2, "check node takes one node name"},
		"bad wait":         {[]string{"check", "node", "gpu-a", "wait=soon"}, 2, `wait="soon": want a duration`},
		"unknown option":   {[]string{"check", "node", "gpu-a", "chek=xid"}, 2, `unknown option "chek"`},
		"bad run id":       {[]string{"show", "checks", "run=x"}, 2, `run="x": want a run id`},
		"bad since":        {[]string{"show", "checks", "since=yesterday"}, 2, `since="yesterday"`},
		"positional":       {[]string{"show", "health", "gpu-a"}, 2, `unexpected "gpu-a": use node=NAME`},
		"no managed nodes": {[]string{"show", "health"}, 1, "health.nodes: lists no node"},
		"resume two":       {[]string{"resume", "node", "a", "b"}, 2, "resume node takes one node name"},
		"run-once junk":    {[]string{"health", "run-once", "quick"}, 2, `unexpected "quick": use schedule=NAME`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out, errw bytes.Buffer
			code := run(append([]string{"--config", conf}, tc.args...), strings.NewReader(""), &out, &errw)
			if code != tc.code || !strings.Contains(errw.String(), tc.msg) {
				t.Errorf("exit %d, stderr %q; want exit %d with %q", code, errw.String(), tc.code, tc.msg)
			}
		})
	}
}

func TestHealthTables(t *testing.T) {
	at := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	rs := []health.StoredResult{{RunID: 7, Node: "gpu-a", Check: "nccl-1node", Verdict: check.Fail, Reason: "busbw_gbps=155.79 < 350 (h100)",
		Values: []check.Value{{Name: "busbw_gbps", Value: 155.79}, {Name: "x", GPU: "1", Value: 2}}, Start: at, End: at.Add(90 * time.Second),
		ExitCode: 0, JobID: 42, Tenant: "acme", Purpose: health.PurposeTenant, At: at.Add(2 * time.Minute)}}
	var b bytes.Buffer
	if err := table.Write(&b, table.Options{Parsable: true}, resultsTable(rs)); err != nil {
		t.Fatal(err)
	}
	want := "At|Run|Node|Check|Verdict|Reason|Values|Duration|JobID|Tenant|Purpose\n" +
		"2026-06-01T08:02:00Z|7|gpu-a|nccl-1node|fail|busbw_gbps=155.79 < 350 (h100)|busbw_gbps=155.79 GPU 1 x=2|1m30s|42|acme|tenant\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	rep := health.Report{
		Events:    []health.Event{{Node: "gpu-a", To: health.BurnIn, Reason: "acceptance checks pending"}},
		Actions:   []health.Action{{Kind: health.ActDrain, Node: "gpu-a", Reason: "gpubridge: burn-in (0/1 passed): acceptance checks pending"}},
		Submitted: []health.Run{{ID: 1, Node: "gpu-a", Checks: []string{"xid", "dcgm-r2"}, JobID: 9}},
		Skipped:   map[string]string{"gpu-b": "not idle"},
	}
	b.Reset()
	if err := table.Write(&b, table.Options{Parsable: true, NoHeader: true}, reportTable(rep)); err != nil {
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
