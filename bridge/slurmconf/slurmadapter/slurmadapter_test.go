package slurmadapter

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/slurmconf"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

type client struct {
	nodes []slurmrest.Node
	parts []slurmrest.Partition
	err   error
}

func (c client) ListNodes(context.Context) ([]slurmrest.Node, error)           { return c.nodes, c.err }
func (c client) ListPartitions(context.Context) ([]slurmrest.Partition, error) { return c.parts, c.err }

func connect(c Client) func(context.Context) (Client, error) {
	return func(context.Context) (Client, error) { return c, nil }
}

func TestRESTNodes(t *testing.T) {
	r := REST{Connect: connect(client{nodes: []slurmrest.Node{
		{Name: "gpu-b", GRES: []slurmrest.GRES{{Name: "gpu", Type: "3g.40gb", Count: 2}, {Name: "gpu", Type: "1g.10gb", Count: 7}}},
		{Name: "cpu-a"},
		{Name: "odd", GRES: []slurmrest.GRES{{Name: "shard", Count: 4}, {Name: "gpu", Count: 1}}},
	}})}
	got, err := r.Nodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []slurmconf.Node{
		{Name: "gpu-b", GPUTypes: []string{"1g.10gb", "3g.40gb"}},
		{Name: "cpu-a"},
		{Name: "odd", GPUTypes: []string{""}}, // an untyped GPU, no shard
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestRESTPartitions(t *testing.T) {
	r := REST{Connect: connect(client{parts: []slurmrest.Partition{
		{Name: "pool", Nodes: "gpu-a,gpu-b", PriorityTier: 10, State: []string{"UP"}, QOS: "pq", TotalCPUs: 16},
	}})}
	got, err := r.Partitions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []slurmconf.Partition{{Name: "pool", Nodes: "gpu-a,gpu-b", PriorityTier: 10, State: []string{"UP"}, QOS: "pq"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestRESTErrors(t *testing.T) {
	down := errors.New("connection refused")
	for name, r := range map[string]REST{
		"connect": {Connect: func(context.Context) (Client, error) { return nil, down }},
		"read":    {Connect: connect(client{err: down})},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := r.Nodes(context.Background()); !errors.Is(err, down) {
				t.Errorf("Nodes: err = %v", err)
			}
			if _, err := r.Partitions(context.Background()); !errors.Is(err, down) {
				t.Errorf("Partitions: err = %v", err)
			}
		})
	}
}

func TestScontrol(t *testing.T) {
	ctx := context.Background()
	if NewScontrol("  ") != nil {
		t.Error("an empty command gives a Scontrol; want nil (slurmrestd only)")
	}
	// echo stands in for scontrol: it prints the arguments it was given.
	sc := NewScontrol("echo scontrol")
	out, err := sc.Show(ctx, "partition")
	if err != nil {
		t.Fatal(err)
	}
	if out != "scontrol show partition\n" {
		t.Errorf("output %q, want the command's stdout", out)
	}
	if s, ok := sc.(Scontrol); !ok || s.String() != "echo scontrol" {
		t.Errorf("NewScontrol = %#v", sc)
	}

	_, err = Scontrol{Argv: []string{"sh", "-c", "echo 'slurm_load_ctl_conf error' >&2; exit 3"}}.Show(ctx, "config")
	if err == nil || !strings.Contains(err.Error(), "slurm_load_ctl_conf error") || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("failing scontrol: err = %v, want its exit status and stderr", err)
	}
	_, err = Scontrol{Argv: []string{"/nonexistent/scontrol"}}.Show(ctx, "config")
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/scontrol") {
		t.Errorf("missing scontrol: err = %v, want the command", err)
	}
	if _, err := (Scontrol{}).Show(ctx, "config"); err == nil {
		t.Error("no command: no error")
	}
}
