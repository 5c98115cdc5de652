package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/robfig/cron/v3"
)

// Job is one periodic task (STYLE rule 9). Run must be safe to call again
// after an error or a crash: every job is level-triggered and idempotent.
type Job interface {
	Name() string
	Run(ctx context.Context) error
}

// Scheduled pairs a job with its cron spec ("@every 5m", "0 3 2 * *").
// An empty spec disables the job. A job on an interval ("@every ...")
// also runs once as soon as the scheduler starts (when this replica
// becomes the leader); a job on a calendar spec waits for its time.
type Scheduled struct {
	Spec string
	Job  Job
}

// Func is a Job made of a name and a function.
func Func(name string, run func(ctx context.Context) error) Job { return funcJob{name, run} }

type funcJob struct {
	name string
	run  func(ctx context.Context) error
}

func (f funcJob) Name() string                  { return f.name }
func (f funcJob) Run(ctx context.Context) error { return f.run(ctx) }

// Metrics are the scheduler's Prometheus collectors.
type Metrics struct {
	runs     *prometheus.CounterVec
	duration *prometheus.HistogramVec
	last     *prometheus.GaugeVec
	leader   prometheus.Gauge

	dependencyUp  *prometheus.GaugeVec
	schemaRefused prometheus.Gauge
	reloads       *prometheus.CounterVec
	lastReload    prometheus.Gauge
}

// NewMetrics registers the scheduler's collectors on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpubridge_job_runs_total", Help: "Periodic job runs by job and result (ok, error, interrupted: stopped by a shutdown, reload or lost leadership).",
		}, []string{"job", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "gpubridge_job_duration_seconds", Help: "Wall time of periodic job runs.",
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 10),
		}, []string{"job"}),
		last: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gpubridge_job_last_success_timestamp_seconds", Help: "Unix time of each job's last successful run.",
		}, []string{"job"}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gpubridge_leader", Help: "1 while this replica holds the leader lock and runs jobs.",
		}),
		dependencyUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gpubridge_dependency_up", Help: "1 when the last readiness probe of a dependency (database, slurmrestd, slurmdb) succeeded.",
		}, []string{"dependency"}),
		schemaRefused: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gpubridge_database_schema_refused",
			Help: "1 while gpubridge's database has no gpubridge schema (and serve may not create it) or holds foreign tables.",
		}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpubridge_config_reloads_total", Help: "Configuration reloads (SIGHUP) by result (ok, refused).",
		}, []string{"result"}),
		lastReload: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gpubridge_config_last_reload_success_timestamp_seconds", Help: "Unix time the running configuration was loaded.",
		}),
	}
	reg.MustRegister(m.runs, m.duration, m.last, m.leader, m.dependencyUp, m.schemaRefused, m.reloads, m.lastReload, fencedWrites(), newTxRetries(), newDBNode())
	return m
}

// Scheduler runs jobs on their schedules.
type Scheduler struct {
	cron    *cron.Cron
	logger  *slog.Logger
	metrics *Metrics
	now     func() time.Time

	kickoff []cron.EntryID // interval jobs, run once at Start

	mu      sync.Mutex
	ctx     context.Context
	cancel  context.CancelFunc
	running map[string]int
	active  int           // runs in progress, kick-offs included
	changed chan struct{} // closed and replaced when a run ends
}

// NewScheduler validates every spec and returns a stopped scheduler.
func NewScheduler(jobs []Scheduled, logger *slog.Logger, m *Metrics) (*Scheduler, error) {
	s := &Scheduler{logger: logger, metrics: m, now: time.Now, running: map[string]int{}, changed: make(chan struct{})}
	s.cron = cron.New(cron.WithLocation(time.UTC), cron.WithChain(cron.Recover(cronLogger{logger}), cron.SkipIfStillRunning(cronLogger{logger})))
	for _, j := range jobs {
		if j.Spec == "" {
			logger.Debug("job disabled", "job", j.Job.Name())
			continue
		}
		job := j.Job
		id, err := s.cron.AddFunc(j.Spec, func() { s.RunOnce(job) })
		if err != nil {
			return nil, fmt.Errorf("schedule job %s (%q): %w", job.Name(), j.Spec, err)
		}
		if strings.HasPrefix(j.Spec, "@every ") {
			s.kickoff = append(s.kickoff, id)
		}
	}
	return s, nil
}

// Start begins running jobs; ctx bounds every run. Interval jobs run once
// at once, through the same SkipIfStillRunning wrapper as their ticks.
func (s *Scheduler) Start(ctx context.Context) {
	s.mu.Lock()
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.mu.Unlock()
	s.cron.Start()
	for _, id := range s.kickoff {
		if e := s.cron.Entry(id); e.Valid() {
			go e.WrappedJob.Run()
		}
	}
}

// Stop stops scheduling, cancels running jobs and waits for them.
func (s *Scheduler) Stop() { _ = s.StopWithin(context.Background()) }

// StopWithin stops scheduling and cancels running jobs, then waits for
// them until ctx ends; the error names the jobs still running then.
func (s *Scheduler) StopWithin(ctx context.Context) error {
	s.mu.Lock()
	if s.cancel != nil {
		s.cancel()
	}
	s.mu.Unlock()
	stopped := s.cron.Stop().Done()
	for {
		s.mu.Lock()
		active, changed := s.active, s.changed
		s.mu.Unlock()
		if active == 0 {
			break
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("jobs still running: %s: %w", strings.Join(s.Running(), ", "), ctx.Err())
		}
	}
	select {
	case <-stopped:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("jobs still running: %s: %w", strings.Join(s.Running(), ", "), ctx.Err())
	}
}

// Running lists the jobs running now, sorted.
func (s *Scheduler) Running() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for n, k := range s.running {
		if k > 0 {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// RunOnce runs one job now, recording its metrics and logging its outcome.
func (s *Scheduler) RunOnce(j Job) {
	s.mu.Lock()
	ctx := s.ctx
	s.mu.Unlock()
	if ctx == nil {
		ctx = context.Background()
	}
	s.mu.Lock()
	s.running[j.Name()]++
	s.active++
	s.mu.Unlock()
	start := s.now()
	err := j.Run(ctx)
	d := s.now().Sub(start)
	s.mu.Lock()
	s.running[j.Name()]--
	s.active--
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	result := "ok"
	switch {
	case err != nil && ctx.Err() != nil:
		// Stopped by a shutdown, a reload or a lost leadership.
		result = "interrupted"
		s.logger.Info("job interrupted", "job", j.Name(), "duration", d, "err", err)
	case err != nil:
		result = "error"
		s.logger.Error("job failed", "job", j.Name(), "duration", d, "err", err)
	default:
		s.logger.Debug("job done", "job", j.Name(), "duration", d)
		if s.metrics != nil {
			s.metrics.last.WithLabelValues(j.Name()).SetToCurrentTime()
		}
	}
	if s.metrics != nil {
		s.metrics.runs.WithLabelValues(j.Name(), result).Inc()
		s.metrics.duration.WithLabelValues(j.Name()).Observe(d.Seconds())
	}
}

type cronLogger struct{ l *slog.Logger }

func (c cronLogger) Info(msg string, kv ...any) { c.l.Debug("cron: "+msg, kv...) }
func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.l.Error("cron: "+msg, append(kv, "err", err)...)
}
