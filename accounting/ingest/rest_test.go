package ingest

import (
	"errors"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/slurmrest"
)

func TestCheckTruncated(t *testing.T) {
	u := func(s int64) time.Time { return time.Unix(s, 0) }
	cases := map[string]struct {
		job  slurmrest.DBJob
		want bool
	}{
		"finished inside":              {slurmrest.DBJob{State: []string{"COMPLETED"}, SubmitTime: u(90), EligibleTime: u(90), StartTime: u(100), EndTime: u(150)}, false},
		"started before the window":    {slurmrest.DBJob{State: []string{"COMPLETED"}, SubmitTime: u(10), EligibleTime: u(10), StartTime: u(50), EndTime: u(150)}, false},
		"running, no end":              {slurmrest.DBJob{State: []string{"RUNNING"}, SubmitTime: u(10), EligibleTime: u(10), StartTime: u(50)}, false},
		"running with an end: clipped": {slurmrest.DBJob{State: []string{"RUNNING"}, SubmitTime: u(10), EligibleTime: u(10), StartTime: u(100), EndTime: u(200)}, true},
		"end before start: clipped":    {slurmrest.DBJob{State: []string{"COMPLETED"}, SubmitTime: u(10), EligibleTime: u(10), StartTime: u(100), EndTime: u(60)}, true},
		"pending":                      {slurmrest.DBJob{State: []string{"PENDING"}, SubmitTime: u(10), EligibleTime: u(10)}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := checkTruncated(tc.job, 100, 200)
			if got := errors.Is(err, ErrTruncated); got != tc.want {
				t.Errorf("got %v (%v), want truncated=%v", got, err, tc.want)
			}
		})
	}
}
