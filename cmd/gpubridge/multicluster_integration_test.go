//go:build integration

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestClusterFlag: a configuration listing both testbed clusters under
// clusters: serves the one -M names, each through its own slurmrestd;
// without -M, or with a cluster it does not list, a command is refused
// with the names to choose from, before it reads or writes anything.
func TestClusterFlag(t *testing.T) {
	env := testbed.RequireCluster2(t)
	cfg := filepath.Join(t.TempDir(), "gpubridge.yaml")
	doc := fmt.Sprintf("version: 1\nclusters:\n  - name: %s\n    slurmrest: {url: %q}\n  - name: %s\n    slurmrest: {url: %q}\n",
		env.Cluster, env.RestURL, env.Cluster2, env.Cluster2REST)
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GPUBRIDGE_CONFIG", cfg)
	t.Setenv("GPUBRIDGE_CLUSTER", "") // clusters: names them

	nodes := map[string][2][]string{ // cluster: its nodes, and the other's
		env.Cluster:  {{"gpu-a", "gpu-b"}, {"gpu-c", "gpu-d"}},
		env.Cluster2: {{"gpu-c", "gpu-d"}, {"gpu-a", "gpu-b"}},
	}
	for cluster, want := range nodes {
		out := mustCLI(t, "-M", cluster, "show", "nodes", "-P", "-n")
		for _, n := range want[0] {
			if !strings.Contains(out, n+"|") {
				t.Errorf("-M %s show nodes =\n%s\nwant %s", cluster, out, n)
			}
		}
		for _, n := range want[1] {
			if strings.Contains(out, n+"|") {
				t.Errorf("-M %s show nodes =\n%s\nwant no %s (the other cluster's)", cluster, out, n)
			}
		}
	}
	for args, want := range map[string]string{
		"show nodes":           "lists 2 clusters (" + env.Cluster + ", " + env.Cluster2 + "): name the one to use with -M CLUSTER",
		"-M nosuch show nodes": "-M nosuch: not a cluster of the configuration (clusters: lists " + env.Cluster + ", " + env.Cluster2 + ")",
	} {
		out, errs, code := cliClosed(strings.Fields(args)...)
		if code == 0 || !strings.Contains(errs, want) {
			t.Errorf("gpubridge %s: exit %d\n%s%s\nwant a non-zero exit saying %q", args, code, out, errs, want)
		}
	}
}
