package slurmjobs

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
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

// pages is a slurmjobs.Client that answers ListJobsSince from a script and
// records the since of each call.
type pages struct {
	answers []slurmrest.JobsPage
	errs    []error
	since   []time.Time
}

func (p *pages) ListJobsSince(_ context.Context, f slurmrest.JobFilter, since time.Time) (slurmrest.JobsPage, error) {
	i := len(p.since)
	p.since = append(p.since, since)
	if i < len(p.errs) && p.errs[i] != nil {
		return slurmrest.JobsPage{}, p.errs[i]
	}
	if !slices.Equal(f.States, activeStates) {
		return slurmrest.JobsPage{}, errors.New("not the active states")
	}
	return p.answers[i], nil
}

func (p *pages) UpdateJob(context.Context, int64, slurmrest.JobUpdate) error { return nil }

// TestListJobsReusesUnchanged: the first read is full; the next asks for
// changes since slurmctld's last update and reuses the read when there
// were none; after MaxAge (or on an error) it reads in full again.
func TestListJobsReusesUnchanged(t *testing.T) {
	t0 := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	lu1, lu2 := t0.Add(-time.Second), t0.Add(20*time.Second)
	job := func(id int64) slurmrest.Job {
		return slurmrest.Job{ID: id, Account: "acme", State: []string{"PENDING"}, Reason: "QOSGrpGRES", TRESRequested: "gres/gpu:h100=1"}
	}
	p := &pages{
		answers: []slurmrest.JobsPage{
			{Jobs: []slurmrest.Job{job(1), job(2)}, LastUpdate: lu1, Bytes: 100},
			{Unchanged: true, Bytes: 10},
			{Jobs: []slurmrest.Job{job(2), job(3)}, LastUpdate: lu2, Bytes: 100},
			{Unchanged: true},
			{}, // failed (errs[4])
			{Jobs: []slurmrest.Job{job(3)}, LastUpdate: lu2},
			{Jobs: []slurmrest.Job{job(4)}, LastUpdate: lu2},
		},
		errs: []error{4: errors.New("slurmrestd down")},
	}
	now := t0
	a := &Jobs{Client: p, MaxAge: time.Minute, Now: func() time.Time { return now }}
	ids := func(js []burst.Job) []int64 {
		var out []int64
		for _, j := range js {
			out = append(out, j.ID)
		}
		return out
	}
	read := func(want ...int64) {
		t.Helper()
		js, err := a.ListJobs(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, ids(js)); diff != "" {
			t.Errorf("jobs (-want +got)\n%s", diff)
		}
	}
	read(1, 2)
	now = now.Add(10 * time.Second)
	read(1, 2) // unchanged: reused
	if r := a.LastRead(); !r.Unchanged || r.Jobs != 2 || r.Bytes != 10 {
		t.Errorf("last read = %+v", r)
	}
	now = now.Add(10 * time.Second)
	read(2, 3) // changed
	now = now.Add(10 * time.Second)
	js, _ := a.ListJobs(context.Background()) // unchanged: reused, a copy
	js[0].ID = 99
	now = now.Add(10 * time.Second)
	if _, err := a.ListJobs(context.Background()); err == nil {
		t.Fatal("a failed read: no error")
	}
	now = now.Add(time.Minute) // the read of 20s is now older than MaxAge
	read(3)
	a.MaxAge = -1
	read(4)
	want := []time.Time{{}, lu1, lu1, lu2, lu2, {}, {}}
	if diff := cmp.Diff(want, p.since); diff != "" {
		t.Errorf("since of each read (-want +got)\n%s", diff)
	}
}
