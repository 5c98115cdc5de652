package slurmrest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNodeRows(t *testing.T) {
	nodes := []Node{
		{Name: "gpu-b", State: []string{"MIXED"}, Partitions: []string{"pool"},
			GRES:     []GRES{{Name: "gpu", Type: "3g.40gb", Count: 2}, {Name: "gpu", Type: "1g.10gb", Count: 7}},
			GRESUsed: []GRES{{Name: "gpu", Type: "1g.10gb", Count: 1}}},
		{Name: "cpu-a", State: []string{"IDLE", "DRAIN"}},
	}
	want := []NodeRow{
		{Name: "cpu-a", State: "IDLE+DRAIN", Partitions: []string{}},
		{Name: "gpu-b", State: "MIXED", Partitions: []string{"pool"}, GPUType: "1g.10gb", GPUs: 7, GPUsUsed: 1},
		{Name: "gpu-b", State: "MIXED", Partitions: []string{"pool"}, GPUType: "3g.40gb", GPUs: 2},
	}
	if diff := cmp.Diff(want, NodeRows(nodes)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
