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
