package slurmadapter

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

func TestFromNode(t *testing.T) {
	n := slurmrest.Node{Name: "gpu-a", State: []string{"MIXED", "DRAIN"}, Reason: "gpubridge: x", Partitions: []string{"pool"}, AllocCPUs: 2,
		GRES: []slurmrest.GRES{{Name: "gpu", Type: "h100", Count: 4}}, GRESUsed: []slurmrest.GRES{{Name: "gpu", Type: "h100", Count: 1}}}
	want := health.SlurmNode{Name: "gpu-a", Drain: true, Reason: "gpubridge: x", Partitions: []string{"pool"}, AllocCPUs: 2, AllocGPUs: 1,
		GPUs: []health.GPU{{Type: "h100", Count: 4}}}
	if diff := cmp.Diff(want, FromNode(n)); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if sn := FromNode(slurmrest.Node{State: []string{"DOWN", "NOT_RESPONDING"}}); !sn.Down || sn.Drain {
		t.Errorf("down node %+v", sn)
	}
}

func TestBaseStateAndNames(t *testing.T) {
	for in, want := range map[string]string{"PENDING": "PENDING", "RUNNING,COMPLETING": "COMPLETING", "CANCELLED": "CANCELLED",
		"PENDING,REQUEUED": "PENDING", "NODE_FAIL": "NODE_FAIL", "": "UNKNOWN"} {
		var states []string
		if in != "" {
			states = splitComma(in)
		}
		if got := baseState(states); got != want {
			t.Errorf("baseState(%q) = %q, want %q", in, got, want)
		}
	}
	a := &Adapter{BookingPrefix: "bk-"}
	for name, want := range map[string]bool{"bk-12": true, "bk-": false, "bk-1a": false, "gpubridge-3": false, "gpubridge_health_gpu-a": false} {
		if got := a.isBooking(name); got != want {
			t.Errorf("isBooking(%q) = %v", name, got)
		}
	}
	if n, ok := fenceNode(health.FenceName("gpu-a")); !ok || n != "gpu-a" {
		t.Errorf("fenceNode = %q %v", n, ok)
	}
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}
