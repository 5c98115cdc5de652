package slurmadapter

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/bridge/slurmconf"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

// Client is what the adapter needs of *slurmrest.Client.
type Client interface {
	ListNodes(ctx context.Context) ([]slurmrest.Node, error)
	ListPartitions(ctx context.Context) ([]slurmrest.Partition, error)
}

var _ Client = (*slurmrest.Client)(nil)

// REST reads nodes and partitions through slurmrestd. Connect returns the
// client; it is called on the first read only.
type REST struct {
	Connect func(ctx context.Context) (Client, error)
}

var (
	_ slurmconf.NodeLister      = REST{}
	_ slurmconf.PartitionLister = REST{}
)

// Nodes implements slurmconf.NodeLister: every node with the type of each
// of its GPU entries.
func (r REST) Nodes(ctx context.Context) ([]slurmconf.Node, error) {
	cl, err := r.Connect(ctx)
	if err != nil {
		return nil, err
	}
	ns, err := cl.ListNodes(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]slurmconf.Node, 0, len(ns))
	for _, n := range ns {
		node := slurmconf.Node{Name: n.Name}
		for _, g := range n.GPUs() {
			node.GPUTypes = append(node.GPUTypes, g.Type)
		}
		out = append(out, node)
	}
	return out, nil
}

// Partitions implements slurmconf.PartitionLister.
func (r REST) Partitions(ctx context.Context) ([]slurmconf.Partition, error) {
	cl, err := r.Connect(ctx)
	if err != nil {
		return nil, err
	}
	ps, err := cl.ListPartitions(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]slurmconf.Partition, len(ps))
	for i, p := range ps {
		out[i] = slurmconf.Partition{Name: p.Name, Nodes: p.Nodes, PriorityTier: p.PriorityTier, State: p.State, QOS: p.QOS}
	}
	return out, nil
}

// Scontrol runs scontrol: Argv is the command that runs it, e.g.
// ["scontrol"] or ["ssh", "head", "scontrol"].
type Scontrol struct {
	Argv []string
	// Timeout bounds one run; 0 means 30s.
	Timeout time.Duration
}

var _ slurmconf.Scontrol = Scontrol{}

// NewScontrol splits a command line on spaces ("ssh head scontrol"); an
// empty one gives nil: no scontrol, the live read uses slurmrestd only.
func NewScontrol(command string) slurmconf.Scontrol {
	argv := strings.Fields(command)
	if len(argv) == 0 {
		return nil
	}
	return Scontrol{Argv: argv}
}

// String is the command line.
func (s Scontrol) String() string { return strings.Join(s.Argv, " ") }

// Show runs `scontrol show WHAT` and returns its standard output; a
// failure carries the command and its standard error.
func (s Scontrol) Show(ctx context.Context, what string) (string, error) {
	if len(s.Argv) == 0 {
		return "", errors.New("no scontrol command")
	}
	timeout := s.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	return runOut(ctx, timeout, s.Argv, "show", what)
}

func runOut(ctx context.Context, timeout time.Duration, argv []string, args ...string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := exec.CommandContext(cctx, argv[0], append(argv[1:], args...)...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("%s %s: %w: %s", strings.Join(argv, " "), strings.Join(args, " "), err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return string(out), nil
}
