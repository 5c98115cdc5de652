package slurmrest

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/gpubridge/gpubridge/internal/slurmstr"
)

// Node is one slurmd node as slurmctld sees it.
type Node struct {
	Name       string
	State      []string // e.g. [IDLE], [MIXED], [IDLE DRAIN]
	Reason     string
	Partitions []string
	// GRES are the configured generic resources (from "gres"), GRESUsed
	// the allocated ones (from "gres_used"), one entry per name and type.
	GRES     []GRES
	GRESUsed []GRES
	// TRES and TRESUsed are Slurm's TRES strings, e.g.
	// "cpu=8,mem=16000M,billing=8,gres/gpu=4,gres/gpu:h100=4".
	TRES          string
	TRESUsed      string
	CPUs          int
	AllocCPUs     int
	MemoryMB      int64 // real_memory
	AllocMemoryMB int64
}

// GRES is one generic resource entry: gpu:h100:4.
type GRES struct {
	Name  string // gpu
	Type  string // h100, 1g.10gb; empty when untyped
	Count int64
}

// GPUs returns the node's GPU entries (configured count and used count)
// by type, sorted by type. A node without GPUs returns nil.
func (n Node) GPUs() []GPUCount {
	var out []GPUCount
	for _, g := range n.GRES {
		if g.Name != "gpu" {
			continue
		}
		gc := GPUCount{Type: g.Type, Total: g.Count}
		for _, u := range n.GRESUsed {
			if u.Name == "gpu" && u.Type == g.Type {
				gc.Used = u.Count
			}
		}
		out = append(out, gc)
	}
	slices.SortFunc(out, func(a, b GPUCount) int { return strings.Compare(a.Type, b.Type) })
	return out
}

// GPUCount is how many GPUs of a type a node has and uses.
type GPUCount struct {
	Type  string
	Total int64
	Used  int64
}

type wNode struct {
	Name        string   `json:"name"`
	State       []string `json:"state"`
	Reason      string   `json:"reason"`
	Partitions  []string `json:"partitions"`
	GRES        string   `json:"gres"`
	GRESUsed    string   `json:"gres_used"`
	TRES        string   `json:"tres"`
	TRESUsed    string   `json:"tres_used"`
	CPUs        int      `json:"cpus"`
	AllocCPUs   int      `json:"alloc_cpus"`
	RealMemory  int64    `json:"real_memory"`
	AllocMemory int64    `json:"alloc_memory"`
}

type nodesResp struct {
	envelope
	Nodes []wNode `json:"nodes"`
}

// ListNodes returns every node (GET /slurm/{v}/nodes/).
func (c *Client) ListNodes(ctx context.Context) ([]Node, error) {
	var resp nodesResp
	if err := c.do(ctx, http.MethodGet, c.slurmPath("nodes/"), nil, nil, &resp); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	out := make([]Node, 0, len(resp.Nodes))
	for _, w := range resp.Nodes {
		n := Node{
			Name: w.Name, State: w.State, Reason: w.Reason, Partitions: w.Partitions,
			TRES: w.TRES, TRESUsed: w.TRESUsed, CPUs: w.CPUs, AllocCPUs: w.AllocCPUs,
			MemoryMB: w.RealMemory, AllocMemoryMB: w.AllocMemory,
		}
		var err error
		if n.GRES, err = parseGRES(w.GRES); err != nil {
			return nil, fmt.Errorf("list nodes: node %s: %w", w.Name, err)
		}
		if n.GRESUsed, err = parseGRES(w.GRESUsed); err != nil {
			return nil, fmt.Errorf("list nodes: node %s: %w", w.Name, err)
		}
		out = append(out, n)
	}
	return out, nil
}

// parseGRES reads a node's gres or gres_used string (slurmstr.ParseGRES)
// into one entry per name and type.
func parseGRES(s string) ([]GRES, error) {
	gs, err := slurmstr.ParseGRES(s)
	if err != nil {
		return nil, err
	}
	var out []GRES
	for _, g := range gs {
		out = append(out, GRES{Name: g.Name, Type: g.Type, Count: g.Count})
	}
	return out, nil
}
