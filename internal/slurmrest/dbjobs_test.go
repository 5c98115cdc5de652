package slurmrest

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The window query must carry the flags ingest depends on: without
// disable_truncate_usage_time slurmdbd clips start/end to the window and
// usage of a job crossing its edge is undercounted.
func TestListDBJobsQuery(t *testing.T) {
	var got url.Values
	f := &fake{h: func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Query()
		io.WriteString(w, `{"jobs":[],"errors":[],"warnings":[]}`)
	}}
	s := startFake(t, f)
	c := testClient(t, s.URL, nil)
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	_, err := c.ListDBJobs(context.Background(), DBJobFilter{
		Start: start, End: start.Add(time.Hour), Accounts: []string{"a", "b"},
		ShowDuplicates: true, SkipSteps: true, NoTruncate: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"show_duplicates":             "true",
		"skip_steps":                  "true",
		"disable_truncate_usage_time": "true",
		"account":                     "a,b",
		"start_time":                  strconv.FormatInt(start.Unix(), 10),
		"end_time":                    strconv.FormatInt(start.Add(time.Hour).Unix(), 10),
	} {
		if d := cmp.Diff(want, got.Get(k)); d != "" {
			t.Errorf("query %s (-want +got):\n%s", k, d)
		}
	}
}

// A job cancelled before it started comes back from slurmdbd with
// time.start = 4294967294 (NO_VAL; measured on 26.05.5, the job table
// holds 0): it never started, and its start must not read as 2106.
func TestListDBJobsNoValStart(t *testing.T) {
	f := &fake{h: func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"jobs":[{"job_id":8,"state":{"current":["CANCELLED"]},"time":{"submission":1796115280,"eligible":1796115280,"start":4294967294,"end":1796115313,"elapsed":0}}],"errors":[],"warnings":[]}`)
	}}
	c := testClient(t, startFake(t, f).URL, nil)
	jobs, err := c.ListDBJobs(context.Background(), DBJobFilter{Start: time.Unix(1796115000, 0), End: time.Unix(1796116000, 0)})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("ListDBJobs = %v, %v", jobs, err)
	}
	if j := jobs[0]; !j.StartTime.IsZero() || !j.EndTime.Equal(time.Unix(1796115313, 0)) {
		t.Errorf("start %v end %v; want no start and the cancel time as end", j.StartTime, j.EndTime)
	}
}
