package slurmjobs

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/slurmrest"
)

func TestConvert(t *testing.T) {
	sub := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		in      slurmrest.Job
		want    burst.Job
		wantErr bool
	}{
		"pending, quota held (as the testbed reports it)": {
			in: slurmrest.Job{ID: 3, User: "alice", Account: "b5x", Partition: "pool", QOS: "b5x", State: []string{"PENDING"},
				Reason: "QOSGrpGRES", TRESPerNode: "gres/gpu:h100:1", TRESRequested: "cpu=1,mem=1000M,node=1,billing=1,gres/gpu=1,gres/gpu:h100=1",
				TimeLimitMinutes: slurmrest.LimitOf(5), Priority: slurmrest.LimitOf(1), SubmitTime: sub, EligibleTime: sub,
				StartTime: sub.Add(time.Hour), Comment: "via-lua"},
			want: burst.Job{ID: 3, User: "alice", Account: "b5x", Partition: "pool", QOS: "b5x", States: []string{"PENDING"},
				Reason: "QOSGrpGRES", GPUs: burst.Request{"h100": 1}, Tasks: 1, TimeLimit: 5 * time.Minute, Priority: 1,
				SubmitTime: sub, EligibleTime: sub, Comment: "via-lua"},
		},
		"running uses the allocation": {
			in: slurmrest.Job{ID: 4, Account: "b5x", State: []string{"RUNNING"}, TRESPerNode: "gres/gpu:1",
				TRESRequested: "gres/gpu=1", TRESAllocated: "cpu=1,gres/gpu=1,gres/gpu:h100=1", StartTime: sub,
				TimeLimitMinutes: slurmrest.Unlimited()},
			want: burst.Job{ID: 4, Account: "b5x", States: []string{"RUNNING"}, GPUs: burst.Request{"h100": 1}, Tasks: 1, StartTime: sub},
		},
		"pending array record with three tasks": {
			in: slurmrest.Job{ID: 4, Account: "b5x", State: []string{"PENDING"}, Reason: "QOSGrpGRES",
				TRESRequested: "cpu=1,mem=1000M,node=1,billing=1,gres/gpu=1,gres/gpu:h100=1", ArrayJobID: slurmrest.LimitOf(4),
				ArrayTaskString: "1-3", NodeCount: slurmrest.LimitOf(1)},
			want: burst.Job{ID: 4, Account: "b5x", States: []string{"PENDING"}, Reason: "QOSGrpGRES", GPUs: burst.Request{"h100": 1}, Tasks: 3},
		},
		"--gpus on two nodes, per node": {
			in: slurmrest.Job{ID: 6, State: []string{"PENDING"}, TRESRequested: "cpu=2,node=2", TRESPerNode: "gres/gpu:h100:2",
				NodeCount: slurmrest.LimitOf(2)},
			want: burst.Job{ID: 6, States: []string{"PENDING"}, GPUs: burst.Request{"h100": 4}, Tasks: 1},
		},
		"--gpus per job": {
			in:   slurmrest.Job{ID: 7, State: []string{"PENDING"}, TRESRequested: "cpu=1", TRESPerJob: "gres/gpu:h100:3"},
			want: burst.Job{ID: 7, States: []string{"PENDING"}, GPUs: burst.Request{"h100": 3}, Tasks: 1},
		},
		"bad array string": {
			in:      slurmrest.Job{ID: 8, State: []string{"PENDING"}, TRESRequested: "gres/gpu:h100=1", ArrayTaskString: "x-y"},
			want:    burst.Job{ID: 8, States: []string{"PENDING"}, Tasks: 1},
			wantErr: true,
		},
		"bad TRES": {
			in:      slurmrest.Job{ID: 5, State: []string{"PENDING"}, TRESRequested: "gres/gpu:h100=x"},
			want:    burst.Job{ID: 5, States: []string{"PENDING"}, Tasks: 1},
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Convert(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}
