package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

// DBJobLister is the part of the slurmrestd client the REST source uses.
type DBJobLister interface {
	ListDBJobs(ctx context.Context, f slurmrest.DBJobFilter) ([]slurmrest.DBJob, error)
}

var _ DBJobLister = (*slurmrest.Client)(nil)

// REST reads job runs from slurmrestd (GET /slurmdb/{v}/jobs/) in time
// windows that adapt to the job density: a window in which more than
// MaxJobs runs ended is halved and read again; one with fewer than a quarter
// of it doubles the next window. (Runs that span many windows come back in
// each and do not shrink with the window, so they do not steer it.)
//
// A window that slurmdbd refuses as too wide (its MaxQueryTimeRange, error
// 7007) or too large (error 7006), or whose answer exceeds the client's
// MaxBodyBytes, is halved too, down to MinWindow; later windows stay below
// the refused width. When even MinWindow is refused, the read fails with
// ErrWindowRefused: the alert that asks the admin to change a limit.
type REST struct {
	client  DBJobLister
	cluster string
	// Window is the first window (default 1h); MinWindow and MaxWindow
	// bound it (default 1 minute and 1 day).
	Window, MinWindow, MaxWindow time.Duration
	// MaxJobs is the most records one window should return (default 5000).
	MaxJobs int
	Log     *slog.Logger
	// Calls counts the requests made (for tests and logs).
	Calls int
}

var _ Source = (*REST)(nil)

// NewREST reads cluster's job records through client.
func NewREST(client DBJobLister, cluster string) *REST {
	return &REST{client: client, cluster: cluster, Window: time.Hour, MinWindow: time.Minute, MaxWindow: 24 * time.Hour, MaxJobs: 5000}
}

// Name implements Source.
func (s *REST) Name() string { return "slurmrestd" }

// controllerClock is the part of the client that reads slurmctld's clock.
type controllerClock interface {
	ControllerTime(ctx context.Context) (time.Time, error)
}

var _ controllerClock = (*slurmrest.Client)(nil)

// Now implements Clocked: slurmctld's clock, when the client can read it.
func (s *REST) Now(ctx context.Context) (time.Time, error) {
	c, ok := s.client.(controllerClock)
	if !ok {
		return time.Time{}, errors.New("the slurmrestd client cannot read slurmctld's clock")
	}
	return c.ControllerTime(ctx)
}

// ErrTruncated is returned when slurmrestd clipped job times to the query
// window. slurmdbd does that unless the request carries
// disable_truncate_usage_time=true; a clipped start would undercount GPU
// time, so the ingest stops instead.
var ErrTruncated = errors.New("slurmrestd returned job times clipped to the query window (the request lacks disable_truncate_usage_time=true)")

// ErrWindowRefused is returned when slurmrestd refuses even the smallest
// window (REST.MinWindow) as too wide or too large.
var ErrWindowRefused = errors.New("slurmrestd refuses even the smallest ingest window")

// refused says whether err is slurmdbd or the client refusing a window for
// its width or the size of its answer: a smaller window may pass.
func refused(err error) bool {
	return errors.Is(err, slurmrest.ErrQueryTooWide) || errors.Is(err, slurmrest.ErrTooLarge)
}

// checkTruncated rejects a response whose times were clipped to the
// window: a running job with an end time, or an end before the start. (A
// clipped start alone cannot be told from a real one; the running jobs,
// read in every ingest, give the clipping away.)
func checkTruncated(j slurmrest.DBJob, from, to int64) error {
	running := slices.Contains(j.State, "RUNNING") || slices.Contains(j.State, "SUSPENDED")
	start, end := unixOr0(j.StartTime), unixOr0(j.EndTime)
	switch {
	case running && end != 0, end != 0 && start != 0 && end < start:
		return fmt.Errorf("%w: job %d start %d end %d in window %d..%d", ErrTruncated, j.JobID, start, end, from, to)
	}
	return nil
}

func unixOr0(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func (s *REST) list(ctx context.Context, from, to int64) ([]slurmrest.DBJob, error) {
	s.Calls++
	return s.client.ListDBJobs(ctx, slurmrest.DBJobFilter{
		Start: time.Unix(from, 0), End: time.Unix(to, 0), ShowDuplicates: true, SkipSteps: true, NoTruncate: true,
	})
}

// Read implements Source. The REST API offers no snapshot, so the windows
// of finished runs are read first and the running runs last: a run that
// ends meanwhile is read as finished (or, ending after its window was read,
// at the next ingest), never as both.
func (s *REST) Read(ctx context.Context, q Query, h Handler) error {
	w := int64(cmp.Or(s.Window, time.Hour) / time.Second)
	minW, maxW := max(int64(s.MinWindow/time.Second), 1), max(int64(s.MaxWindow/time.Second), 1)
	maxJobs := cmp.Or(s.MaxJobs, 5000)
	for from := q.From; from < q.To; {
		to := min(from+w, q.To)
		jobs, err := s.list(ctx, from, to)
		if err != nil && refused(err) && w > minW {
			maxW = max(w/2, minW) // stay below what was refused
			w = maxW
			s.logf(slog.LevelWarn, "slurmrestd refused the window; halving", "from", unixUTC(from), "window", time.Duration(to-from)*time.Second, "error", err)
			continue
		}
		if err != nil && refused(err) {
			s.logf(slog.LevelError, "slurmrestd refuses the smallest ingest window", "from", unixUTC(from), "window", time.Duration(to-from)*time.Second, "error", err)
			return fmt.Errorf("%w: %s at %s: %w; raise slurmdbd's MaxQueryTimeRange or slurmrest.maxBodyBytes, or ingest from slurm_acct_db (source=slurmdb)",
				ErrWindowRefused, time.Duration(to-from)*time.Second, unixUTC(from).Format(time.RFC3339), err)
		}
		if err != nil {
			return err
		}
		var done []meter.Run
		for _, j := range jobs {
			if err := checkTruncated(j, from, to); err != nil {
				return err
			}
			r := s.run(j)
			// The API returns every record active in the window; keep the
			// runs that ended in it. A run ending exactly at `to` belongs
			// to the next window.
			if r.End >= from && r.End < to && r.End > 0 {
				done = append(done, r)
			}
		}
		// Only the runs that ended in the window shrink with it (long and
		// running jobs come back in every window), so they steer its size.
		if len(done) > maxJobs && w > minW {
			w = max(w/2, minW)
			s.logf(slog.LevelDebug, "slurmrestd window too dense; halving", "ended", len(done), "window", time.Duration(w)*time.Second)
			continue
		}
		slices.SortFunc(done, func(a, b meter.Run) int { return cmp.Or(cmp.Compare(a.End, b.End), a.Key.Compare(b.Key)) })
		for _, r := range done {
			if err := h.Finished(r, 0); err != nil {
				return err
			}
		}
		from = to
		if len(done) < maxJobs/4 {
			w = min(w*2, maxW)
		}
	}
	// Runs running at q.To: the records active in its last second.
	jobs, err := s.list(ctx, q.To-1, q.To)
	if err != nil && refused(err) {
		return fmt.Errorf("%w: even the 1s window of the running jobs at %s: %w", ErrWindowRefused, unixUTC(q.To).Format(time.RFC3339), err)
	}
	if err != nil {
		return err
	}
	var running []meter.Run
	for _, j := range jobs {
		if err := checkTruncated(j, q.To-1, q.To); err != nil {
			return err
		}
		if r := s.run(j); r.Start > 0 && r.End == 0 && r.Start <= q.To {
			running = append(running, r)
		}
	}
	slices.SortFunc(running, func(a, b meter.Run) int { return a.Key.Compare(b.Key) })
	return h.Running(running)
}

func (s *REST) run(j slurmrest.DBJob) meter.Run {
	unix := func(t time.Time) int64 {
		if t.IsZero() {
			return 0
		}
		return t.Unix()
	}
	r := meter.Run{
		Key:     meter.RunKey{Cluster: s.cluster, JobID: uint32(j.JobID), Submit: unix(j.SubmitTime)},
		Account: j.Account, User: j.User, Partition: j.Partition, QOS: j.QOS, Reservation: j.Reservation,
		Start: unix(j.StartTime), End: unix(j.EndTime),
	}
	if r.Start > 0 {
		r.GPUs = tresAllocs(j.TRESAllocated)
	}
	return r
}

func (s *REST) logf(level slog.Level, msg string, args ...any) {
	if s.Log != nil {
		s.Log.Log(context.Background(), level, msg, args...)
	}
}

// String describes the source for logs.
func (s *REST) String() string { return fmt.Sprintf("slurmrestd jobs of cluster %s", s.cluster) }
