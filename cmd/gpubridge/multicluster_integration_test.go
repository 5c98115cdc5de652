//go:build integration

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestApplyOnTwoClusters: one tenants file applied with -M to each of the
// two testbed clusters makes the tenant's association on each (the QOS
// and account are slurmdbd's, once); a second apply on each is a no-op;
// and each slurmctld holds the tenant's jobs at its quota on its own (the
// QOS limit is enforced per cluster: test/testbed/multi-cluster-facts.md).
func TestApplyOnTwoClusters(t *testing.T) {
	env := testbed.RequireCluster2(t)
	const tn = "mcq1"
	h := newTenantIT(t, tn)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gpubridge.yaml")
	doc := fmt.Sprintf("version: 1\nclusters:\n  - name: %s\n    slurmrest: {url: %q}\n  - name: %s\n    slurmrest: {url: %q}\n",
		env.Cluster, env.RestURL, env.Cluster2, env.Cluster2REST)
	file := filepath.Join(dir, "tenants.yaml")
	spec := "tenants:\n  - name: " + tn + "\n    users: [alice]\n    gpus: {h100: 1}\n"
	for p, b := range map[string]string{cfg: doc, file: spec} {
		if err := os.WriteFile(p, []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GPUBRIDGE_CONFIG", cfg)
	t.Setenv("GPUBRIDGE_CLUSTER", "")

	for _, c := range []string{env.Cluster, env.Cluster2} {
		first := h.apply("-M", c, "-f", file)
		if len(mine(first.Changes, tn)) == 0 {
			t.Fatalf("-M %s apply: no change of %s: %+v", c, tn, first.Changes)
		}
		if again := h.apply("-M", c, "-f", file); len(mine(again.Changes, tn)) != 0 {
			t.Errorf("-M %s: second apply changed %v; want a no-op", c, mine(again.Changes, tn))
		}
	}
	assoc := h.sacctmgr("-n", "-P", "show", "association", "where", "account="+tn, "user=alice", "format=cluster,qos")
	for _, c := range []string{env.Cluster, env.Cluster2} {
		if !strings.Contains("\n"+assoc, "\n"+c+"|") {
			t.Errorf("alice's associations to %s:\n%s\nwant one on %s", tn, assoc, c)
		}
	}

	// Two one-GPU jobs on each cluster against a quota of one: each
	// cluster runs one and holds one.
	ctx := context.Background()
	t.Cleanup(func() { _, _ = env.Run(ctx, "", nil, "scancel", "-M", env.Cluster+","+env.Cluster2, "-A", tn) })
	for _, c := range []string{env.Cluster, env.Cluster2} {
		for range 2 {
			h.mustSbatch("alice", "-M", c, "-A", tn, "--gres=gpu:h100:1", "--wrap", "sleep 120")
		}
	}
	var got string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		got, _ = env.Run(ctx, "", nil, "squeue", "-M", env.Cluster+","+env.Cluster2, "-h", "-A", tn, "-o", "%T|%r")
		if strings.Count(got, "RUNNING|") == 2 && strings.Count(got, "PENDING|QOSGrpGRES") == 2 {
			break
		}
	}
	for _, c := range []string{env.Cluster, env.Cluster2} {
		out, _ := env.Run(ctx, "", nil, "squeue", "-M", c, "-h", "-A", tn, "-o", "%T|%r")
		if strings.Count(out, "RUNNING|") != 1 || strings.Count(out, "PENDING|QOSGrpGRES") != 1 {
			t.Errorf("%s's jobs on %s:\n%s\nwant one RUNNING and one PENDING for QOSGrpGRES (quota h100=1 on each cluster)", tn, c, out)
		}
	}
}
