package slurmcheck

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/gres/conf"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

func TestCheck(t *testing.T) {
	res := conf.Result{Node: "gpu-b", Gres: "gpu:1g.10gb:7,gpu:3g.40gb:2", Types: []conf.TypeCount{{Type: "1g.10gb", Count: 7}, {Type: "3g.40gb", Count: 2}}}
	gpuB := slurmrest.Node{Name: "gpu-b", State: []string{"IDLE"}, GRES: []slurmrest.GRES{{Name: "gpu", Type: "1g.10gb", Count: 7}, {Name: "gpu", Type: "3g.40gb", Count: 2}, {Name: "shard", Count: 8}}}
	fewer := gpuB
	fewer.GRES = []slurmrest.GRES{{Name: "gpu", Type: "1g.10gb", Count: 6}, {Name: "gpu", Type: "3g.40gb", Count: 2}}
	fewer.State, fewer.Reason = []string{"IDLE", "DRAIN"}, "gres/gpu count reported lower than configured"
	cases := map[string]struct {
		nodes   []slurmrest.Node
		err     error
		ok      string
		wantErr []string
	}{
		"agree":      {nodes: []slurmrest.Node{{Name: "gpu-a"}, gpuB}, ok: "gres check gpu-b: OK, Slurm and the inventory agree: gpu:1g.10gb:7,gpu:3g.40gb:2"},
		"differ":     {nodes: []slurmrest.Node{fewer}, wantErr: []string{"differs from the inventory (node state IDLE+DRAIN, reason", "gpu:1g.10gb: inventory 7, Slurm 6", "Slurm:     gpu:1g.10gb:6,gpu:3g.40gb:2"}},
		"no node":    {nodes: []slurmrest.Node{{Name: "gpu-a"}}, wantErr: []string{`gres check: slurmctld has no node "gpu-b"`}},
		"list fails": {err: errors.New("connection refused"), wantErr: []string{"gres check: connection refused"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l := ListerFunc(func(context.Context) ([]slurmrest.Node, error) { return tc.nodes, tc.err })
			ok, err := Check(context.Background(), l, res)
			if len(tc.wantErr) == 0 {
				if err != nil || ok != tc.ok {
					t.Fatalf("Check = %q, %v; want %q", ok, err, tc.ok)
				}
				return
			}
			if err == nil {
				t.Fatalf("Check = %q, want an error", ok)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%s\ndoes not say %q", err, w)
				}
			}
		})
	}
}
