package slurmrest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// recordedJob is one job as the testbed's slurmrestd 26.05 (v0.0.44)
// reports it.
func recordedJob(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile("../../test/bench/burstbench/testdata/pending-job.json")
	if err != nil {
		t.Fatal(err)
	}
	var j map[string]any
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	return j
}

// jobsBody is a GET jobs/ body: the recorded job as a pending, a running,
// a completed and an array job, with unicode and escapes in a comment.
func jobsBody(t *testing.T, lastUpdate int64) []byte {
	t.Helper()
	var jobs []map[string]any
	for i, st := range []string{"PENDING", "RUNNING", "COMPLETED", "PENDING"} {
		j := recordedJob(t)
		j["job_id"] = 100 + i
		j["job_state"] = []string{st}
		switch i {
		case 1:
			j["tres_alloc_str"] = "cpu=1,mem=1000M,node=1,billing=1,gres/gpu=1,gres/gpu:h100=1"
			j["state_reason"] = "None"
		case 2:
			j["comment"] = "naïve \"quoted\" \\ tab\t done"
		case 3:
			j["array_task_string"] = "1-3"
			j["array_job_id"] = map[string]any{"set": true, "infinite": false, "number": 103}
		}
		jobs = append(jobs, j)
	}
	b, err := json.Marshal(map[string]any{
		"jobs": jobs, "last_backfill": map[string]any{"set": true, "infinite": false, "number": lastUpdate - 5},
		"last_update": map[string]any{"set": true, "infinite": false, "number": lastUpdate},
		"meta":        map[string]any{"plugin": map[string]any{"data_parser": "data_parser/v0.0.44"}}, "errors": []any{}, "warnings": []any{},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestListJobsSinceDecodesAsListJobs: the one-pass decode gives exactly the
// jobs of ListJobs, for every filter.
func TestListJobsSinceDecodesAsListJobs(t *testing.T) {
	const lastUpdate = 1796115851
	body := jobsBody(t, lastUpdate)
	s := startFake(t, &fake{h: func(w http.ResponseWriter, r *http.Request) { w.Write(body) }})
	c := testClient(t, s.URL, nil)
	ctx := context.Background()
	for name, f := range map[string]JobFilter{
		"all":     {},
		"active":  {States: []string{"PENDING", "RUNNING"}},
		"pending": {States: []string{"PENDING"}, Reasons: []string{"QOSGrpGRES"}},
		"none":    {Accounts: []string{"nobody"}},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := c.ListJobs(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.ListJobsSince(ctx, f, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got.Jobs, cmp.Comparer(func(a, b []Job) bool { return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b) })); diff != "" {
				t.Errorf("(-ListJobs +ListJobsSince)\n%s", diff)
			}
			if got.Unchanged || !got.LastUpdate.Equal(time.Unix(lastUpdate, 0)) || got.Bytes != len(body) {
				t.Errorf("page: unchanged %v, last update %s, %d bytes (want %d)", got.Unchanged, got.LastUpdate, got.Bytes, len(body))
			}
		})
	}
	all, _ := c.ListJobsSince(ctx, JobFilter{}, time.Time{})
	if len(all.Jobs) != 4 || all.Jobs[2].Comment != "naïve \"quoted\" \\ tab\t done" || all.Jobs[3].ArrayTaskString != "1-3" {
		t.Errorf("jobs = %+v", all.Jobs)
	}
}

// TestListJobsSinceUpdateTime: since is sent as update_time; slurmrestd's
// answer when no job changed (no jobs, last_update unset, a warning) is
// Unchanged, while an empty cluster is not.
func TestListJobsSinceUpdateTime(t *testing.T) {
	var mu sync.Mutex
	var queries []string
	changed := true
	s := startFake(t, &fake{h: func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		queries = append(queries, r.URL.RawQuery)
		switch {
		case r.URL.Query().Get("update_time") == "" || changed:
			io.WriteString(w, `{"jobs":[],"last_update":{"set":true,"infinite":false,"number":1796115900},"errors":[],"warnings":[]}`)
		default:
			io.WriteString(w, `{"jobs":[],"last_backfill":{"set":true,"infinite":false,"number":0},"last_update":{"set":true,"infinite":false,"number":0},
"errors":[],"warnings":[{"description":"No job changes since update_time[1796115900]=2026-12-01T09:05:00","source":"op_handler_jobs"}]}`)
		}
	}})
	c := testClient(t, s.URL, nil)
	ctx := context.Background()
	p, err := c.ListJobsSince(ctx, JobFilter{}, time.Time{})
	if err != nil || p.Unchanged || p.LastUpdate.Unix() != 1796115900 {
		t.Fatalf("first read: %+v, %v", p, err)
	}
	p, err = c.ListJobsSince(ctx, JobFilter{}, p.LastUpdate)
	if err != nil || p.Unchanged {
		t.Fatalf("read after a change (an empty cluster): %+v, %v; want not unchanged", p, err)
	}
	mu.Lock()
	changed = false
	mu.Unlock()
	p, err = c.ListJobsSince(ctx, JobFilter{}, p.LastUpdate)
	if err != nil || !p.Unchanged || len(p.Jobs) != 0 || !p.LastUpdate.IsZero() {
		t.Fatalf("read without a change: %+v, %v; want unchanged", p, err)
	}
	if diff := cmp.Diff([]string{"", "update_time=1796115900", "update_time=1796115900"}, queries); diff != "" {
		t.Errorf("queries (-want +got)\n%s", diff)
	}
}

// TestListJobsSinceFailsAsListJobs: every failure reads as ListJobs's (the
// same *SlurmError, sentinel and retries), though the body is decoded once.
func TestListJobsSinceFailsAsListJobs(t *testing.T) {
	cases := map[string]http.HandlerFunc{
		"200 with errors[]": func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"jobs":[],"errors":[{"error_number":2017,"error":"Invalid job id specified","source":"x","description":"d"}],"warnings":[]}`)
		},
		"500 with errors[]": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			io.WriteString(w, `{"errors":[{"error_number":9001,"error":"Unable to query","source":"_dump_jobs","description":"Failure"}]}`)
		},
		"503": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(503)
			io.WriteString(w, `{"errors":[{"error_number":1,"error":"busy"}]}`)
		},
		"500 non-JSON": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			io.WriteString(w, "<html>proxy error</html>")
		},
		"truncated JSON": func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"jobs":[{"job_id":1,"name":"x`)
		},
		"body shorter than its Content-Length": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			io.WriteString(w, `{"jobs":[`)
		},
		"wrong type": func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"jobs":[{"job_id":"one"}],"errors":[],"warnings":[]}`)
		},
		"401": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(401)
			io.WriteString(w, "Authentication failure")
		},
		"404": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(404)
			io.WriteString(w, "Unable to find requested URL endpoint.")
		},
	}
	type outcome struct {
		Status   int
		Numbers  []int
		Attempts int64
		Reads    int64
		NotFound bool
		Unauth   bool
	}
	observe := func(t *testing.T, h http.HandlerFunc, call func(*Client) error) (outcome, error) {
		f := &fake{h: h}
		s := startFake(t, f)
		c := testClient(t, s.URL, nil)
		before := c.Stats()
		err := call(c)
		o := outcome{Attempts: f.attempts.Load(), Reads: c.Stats().Reads - before.Reads,
			NotFound: errors.Is(err, ErrNotFound), Unauth: errors.Is(err, ErrUnauthorized)}
		var se *SlurmError
		if errors.As(err, &se) {
			o.Status = se.HTTPStatus
			for _, d := range se.Errors {
				o.Numbers = append(o.Numbers, d.Number)
			}
		}
		return o, err
	}
	ctx := context.Background()
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			want, werr := observe(t, h, func(c *Client) error { _, err := c.ListJobs(ctx, JobFilter{}); return err })
			got, gerr := observe(t, h, func(c *Client) error { _, err := c.ListJobsSince(ctx, JobFilter{}, time.Time{}); return err })
			if werr == nil || gerr == nil {
				t.Fatalf("ListJobs: %v; ListJobsSince: %v; want both to fail", werr, gerr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-ListJobs +ListJobsSince)\n%s\nListJobs: %v\nListJobsSince: %v", diff, werr, gerr)
			}
			if !strings.HasPrefix(gerr.Error(), "list jobs: ") {
				t.Errorf("error %q does not say what failed", gerr)
			}
		})
	}
}

// TestListJobsSinceRetriesToSuccess: a failed read is retried and the
// retry's answer returned.
func TestListJobsSinceRetriesToSuccess(t *testing.T) {
	var n int
	var mu sync.Mutex
	s := startFake(t, &fake{h: func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			w.WriteHeader(503)
			return
		}
		fmt.Fprintf(w, `{"jobs":[{"job_id":7,"job_state":["PENDING"]}],"last_update":{"set":true,"number":%s},"errors":[],"warnings":[]}`, strconv.Itoa(1796115900))
	}})
	c := testClient(t, s.URL, nil)
	p, err := c.ListJobsSince(context.Background(), JobFilter{}, time.Time{})
	if err != nil || len(p.Jobs) != 1 || p.Jobs[0].ID != 7 {
		t.Fatalf("%+v, %v", p, err)
	}
	if n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestListJobStates(t *testing.T) {
	var got []string
	s := startFake(t, &fake{h: func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.Path+"?"+r.URL.RawQuery)
		io.WriteString(w, `{"jobs":[{"job_id":"7","state":["PENDING"]},{"job_id":"8_1","state":["RUNNING","COMPLETING"]}],"errors":[],"warnings":[]}`)
	}})
	c := testClient(t, s.URL, nil)
	js, err := c.ListJobStates(context.Background(), "7", "8_1")
	if err != nil {
		t.Fatal(err)
	}
	want := []JobState{{ID: "7", State: []string{"PENDING"}}, {ID: "8_1", State: []string{"RUNNING", "COMPLETING"}}}
	if diff := cmp.Diff(want, js); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if _, err := c.ListJobStates(context.Background()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/slurm/v0.0.44/jobs/state/?job_id=7&job_id=8_1", "/slurm/v0.0.44/jobs/state/?"}, got); diff != "" {
		t.Errorf("requests (-want +got)\n%s", diff)
	}
}
