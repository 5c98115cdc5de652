package slurmcheck

import (
	"context"
	"fmt"
	"strings"

	"github.com/gpubridge/gpubridge/gres/conf"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

// NodeLister is the part of the slurmrestd client Check uses.
type NodeLister interface {
	ListNodes(ctx context.Context) ([]slurmrest.Node, error)
}

var _ NodeLister = (*slurmrest.Client)(nil)

// ListerFunc adapts a function to NodeLister.
type ListerFunc func(ctx context.Context) ([]slurmrest.Node, error)

// ListNodes implements NodeLister.
func (f ListerFunc) ListNodes(ctx context.Context) ([]slurmrest.Node, error) { return f(ctx) }

// Check compares the GPU counts per type of res with the node's GRES in
// slurmctld. It returns the line to print when they agree, and an error
// that lists every differing type (and the node's state and reason, when
// Slurm gave one, e.g. a drain for a GRES count mismatch) when they do not.
func Check(ctx context.Context, l NodeLister, res conf.Result) (string, error) {
	nodes, err := l.ListNodes(ctx)
	if err != nil {
		return "", fmt.Errorf("gres check: %w", err)
	}
	var found *slurmrest.Node
	for i := range nodes {
		if nodes[i].Name == res.Node {
			found = &nodes[i]
		}
	}
	if found == nil {
		return "", fmt.Errorf("gres check: slurmctld has no node %q", res.Node)
	}
	got := conf.NodeGres{}
	for _, g := range found.GRES {
		if g.Name == "gpu" {
			got[g.Type] += int(g.Count)
		}
	}
	mm := conf.Compare(res.NodeGres(), got)
	if len(mm) == 0 {
		return fmt.Sprintf("gres check %s: OK, Slurm and the inventory agree: %s", res.Node, res.Gres), nil
	}
	lines := make([]string, len(mm))
	for i, m := range mm {
		lines[i] = "  " + m.String()
	}
	state := ""
	if found.Reason != "" {
		state = fmt.Sprintf(" (node state %s, reason %q)", strings.Join(found.State, "+"), found.Reason)
	}
	return "", fmt.Errorf("gres check %s: Slurm's GRES for the node differs from the inventory%s:\n%s\ninventory: %s\nSlurm:     %s",
		res.Node, state, strings.Join(lines, "\n"), res.Gres, got)
}
