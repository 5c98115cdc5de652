package ingest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
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

// refusingLister refuses windows wider than maxWidth (slurmdbd's
// MaxQueryTimeRange, error 7007) and answers with more than maxRecords
// runs that ended in the window (error 7006, slurmdbd's answer-size limit,
// here counted in runs).
type refusingLister struct {
	DBJobLister
	maxWidth   time.Duration
	maxRecords int
	refusals   int
}

func (l *refusingLister) ListDBJobs(ctx context.Context, f slurmrest.DBJobFilter) ([]slurmrest.DBJob, error) {
	if l.maxWidth > 0 && f.End.Sub(f.Start) > l.maxWidth {
		l.refusals++
		return nil, &slurmrest.SlurmError{Method: "GET", Path: "/slurmdb/v0.0.44/jobs/", HTTPStatus: 500,
			Errors: []slurmrest.ErrorDetail{{Number: 7007, Text: "Too wide of a date range in query"}}}
	}
	jobs, err := l.DBJobLister.ListDBJobs(ctx, f)
	ended := 0 // what shrinks with the window (long and running jobs come back in every one)
	for _, j := range jobs {
		if !j.EndTime.IsZero() && !j.EndTime.Before(f.Start) && j.EndTime.Before(f.End) {
			ended++
		}
	}
	if l.maxRecords > 0 && ended > l.maxRecords {
		l.refusals++
		return nil, &slurmrest.SlurmError{Method: "GET", Path: "/slurmdb/v0.0.44/jobs/", HTTPStatus: 500,
			Errors: []slurmrest.ErrorDetail{{Number: 7006, Text: "Query result exceeds size limit"}}}
	}
	return jobs, err
}

func TestRESTWindowShrinksOnRefusals(t *testing.T) {
	asOf := ts("2026-12-20 00:00:00")
	rows := randomRows(11, 1500, asOf)
	viaTable := ledger.NewMemory()
	if _, err := newIngester(&tableSource{rows: rows}, viaTable, asOf).Ingest(context.Background(), window); err != nil {
		t.Fatal(err)
	}
	cases := map[string]*refusingLister{
		"too wide (7007)":  {maxWidth: 2 * time.Hour},
		"too large (7006)": {maxRecords: 60},
	}
	for name, l := range cases {
		t.Run(name, func(t *testing.T) {
			fake := &restFake{rows: rows}
			l.DBJobLister = fake
			rest := NewREST(l, "c")
			rest.Window, rest.MaxWindow = 12*time.Hour, 48*time.Hour
			viaREST := ledger.NewMemory()
			if _, err := newIngester(rest, viaREST, asOf).Ingest(context.Background(), window); err != nil {
				t.Fatal(err)
			}
			if l.refusals == 0 {
				t.Fatal("nothing was refused: the test proves nothing")
			}
			if d := gocmp.Diff(fromLedger(t, viaTable), fromLedger(t, viaREST)); d != "" {
				t.Fatalf("totals after refusals (-table +rest)\n%s", d)
			}
			// Once refused, the window never grows back to a refused width.
			if l.maxWidth > 0 {
				for _, w := range fake.windows {
					if w > l.maxWidth {
						t.Fatalf("a %s window reached slurmdbd after it refused wider than %s", w, l.maxWidth)
					}
				}
			}
			t.Logf("%d refusals, %d accepted windows", l.refusals, len(fake.windows))
		})
	}
}

func TestRESTWindowRefusedAtMinimumIsAnAlert(t *testing.T) {
	asOf := ts("2026-12-20 00:00:00")
	l := &refusingLister{DBJobLister: &restFake{rows: randomRows(3, 50, asOf)}, maxWidth: 30 * time.Second}
	rest := NewREST(l, "c")
	mem := ledger.NewMemory()
	_, err := newIngester(rest, mem, asOf).Ingest(context.Background(), window)
	if !errors.Is(err, ErrWindowRefused) || !errors.Is(err, slurmrest.ErrQueryTooWide) ||
		!strings.Contains(err.Error(), "1m0s at 2026-09-01T00:00:00Z") || !strings.Contains(err.Error(), "MaxQueryTimeRange") {
		t.Fatalf("err = %v, want ErrWindowRefused naming the 1m window, its start and the remedy", err)
	}
	if _, ok, _ := mem.Watermark(context.Background(), "c", rest.Name()); ok {
		t.Error("a watermark was written although nothing was read")
	}
}
