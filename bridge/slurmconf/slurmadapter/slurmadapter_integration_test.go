//go:build integration

package slurmadapter

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/slurmconf"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestTestbedLive reads the testbed (Slurm 26.05) as `config render` and
// `config check` do: the GPU nodes and types from slurmrestd, the live
// configuration with scontrol (run in the testbed's root) or slurmrestd.
// The testbed runs the rendered two-tier configuration, so every setting
// is ok with scontrol, and none differs with slurmrestd alone.
func TestTestbedLive(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	cl, err := slurmrest.New(ctx, slurmrest.Options{URL: env.RestURL, JWTKeyFile: env.JWTKeyFile, User: "root"})
	if err != nil {
		t.Fatal(err)
	}
	rest := REST{Connect: connect(cl)}
	spec, err := slurmconf.Complete(ctx, slurmconf.Spec{PoolPartition: "pool", OnDemandPartition: "ondemand", PoolDefault: true}, rest)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"gpu-a", "gpu-b"}, spec.Nodes); diff != "" {
		t.Errorf("GPU nodes (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff([]string{"1g.10gb", "3g.40gb", "h100"}, spec.GPUTypes); diff != "" {
		t.Errorf("GPU types (-want +got)\n%s", diff)
	}

	sc := Scontrol{Argv: []string{env.ExecScript, "scontrol"}}
	live, src, err := slurmconf.LiveReader{Scontrol: sc, REST: rest}.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if src != sc.String() || live.Partial || live.Config["ClusterName"] == "" || live.Partitions["pool"] == nil {
		t.Fatalf("scontrol read from %q: partial %v, ClusterName %q, pool %v", src, live.Partial, live.Config["ClusterName"], live.Partitions["pool"])
	}
	fs, err := slurmconf.CheckLive(ctx, spec, slurmconf.LiveReader{Scontrol: sc, REST: rest})
	if err != nil {
		t.Fatal(err)
	}
	if slurmconf.Failed(fs) {
		t.Errorf("with scontrol, not every setting is ok:\n%v", fs)
	}

	fs, err = slurmconf.CheckLive(ctx, spec, slurmconf.LiveReader{REST: rest})
	if err != nil {
		t.Fatal(err)
	}
	ok := 0
	for _, f := range fs {
		if f.Status == slurmconf.OK {
			ok++
		}
	}
	// Nodes, PriorityTier and State of both partitions.
	if slurmconf.Differ(fs) || ok != 6 {
		t.Errorf("with slurmrestd only: %d ok, want 6 and nothing that differs:\n%v", ok, fs)
	}
}
