//go:build integration

package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/internal/testbed"
)

func runOK(t *testing.T, args ...string) string {
	t.Helper()
	var out, errw bytes.Buffer
	if code := run(args, strings.NewReader(""), &out, &errw); code != 0 {
		t.Fatalf("gpubridge %s: exit %d: %s", strings.Join(args, " "), code, errw.String())
	}
	return out.String()
}

func TestShowNodesOnTestbed(t *testing.T) {
	testbed.Require(t)
	out := runOK(t, "show", "nodes", "-P")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[0] != "Name|State|Partitions|GPUType|GPUs|GPUsUsed" {
		t.Errorf("header = %q", lines[0])
	}
	var gpuA, cpuA bool
	for _, l := range lines[1:] {
		f := strings.Split(l, "|")
		if len(f) != 6 {
			t.Fatalf("row %q has %d fields", l, len(f))
		}
		switch f[0] {
		case "gpu-a":
			gpuA = f[2] == "pool,ondemand" && f[3] == "h100" && f[4] == "4"
		case "cpu-a":
			cpuA = f[3] == "" && f[4] == "0" && f[5] == "0"
		}
	}
	if !gpuA || !cpuA {
		t.Errorf("gpu-a (pool,ondemand h100 4) or cpu-a (no GPUs) missing or wrong:\n%s", out)
	}

	var rows []struct {
		Name       string   `json:"name"`
		Partitions []string `json:"partitions"`
		GPUType    string   `json:"gpuType"`
		GPUs       int      `json:"gpus"`
		GPUsUsed   int      `json:"gpusUsed"`
	}
	if err := json.Unmarshal([]byte(runOK(t, "show", "nodes", "--json")), &rows); err != nil {
		t.Fatalf("--json does not parse: %v", err)
	}
	types := map[string]int{}
	for _, r := range rows {
		types[r.Name+"/"+r.GPUType] = r.GPUs
	}
	if types["gpu-a/h100"] != 4 || types["gpu-b/1g.10gb"] != 7 || types["gpu-b/3g.40gb"] != 2 {
		t.Errorf("--json GPUs: %v", types)
	}
}

func TestPingOnTestbed(t *testing.T) {
	env := testbed.Require(t)
	out := runOK(t, "ping", "-P")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[1], env.RestURL+"|v0.0.44|26.") || !strings.Contains(lines[1], "|primary|UP|true|") {
		t.Errorf("ping output:\n%s", out)
	}
	t.Setenv("GPUBRIDGE_SLURMREST_API", "v0.0.43")
	if out := runOK(t, "ping", "-P", "-n"); !strings.Contains(out, "|v0.0.43|") {
		t.Errorf("pinned v0.0.43: %s", out)
	}
}
