package daemon

import (
	"context"
	"fmt"
	"log/slog"
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
// An empty spec disables the job.
type Scheduled struct {
	Spec string
	Job  Job
}

// Metrics are the scheduler's Prometheus collectors.
type Metrics struct {
	runs     *prometheus.CounterVec
	duration *prometheus.HistogramVec
	last     *prometheus.GaugeVec
	leader   prometheus.Gauge
}

// NewMetrics registers the scheduler's collectors on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpubridge_job_runs_total", Help: "Periodic job runs by job and result (ok, error).",
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
	}
	reg.MustRegister(m.runs, m.duration, m.last, m.leader)
	return m
}

// Scheduler runs jobs on their schedules.
type Scheduler struct {
	cron    *cron.Cron
	logger  *slog.Logger
	metrics *Metrics
	now     func() time.Time

	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
}

// NewScheduler validates every spec and returns a stopped scheduler.
func NewScheduler(jobs []Scheduled, logger *slog.Logger, m *Metrics) (*Scheduler, error) {
	s := &Scheduler{logger: logger, metrics: m, now: time.Now}
	s.cron = cron.New(cron.WithLocation(time.UTC), cron.WithChain(cron.Recover(cronLogger{logger}), cron.SkipIfStillRunning(cronLogger{logger})))
	for _, j := range jobs {
		if j.Spec == "" {
			logger.Info("job disabled", "job", j.Job.Name())
			continue
		}
		job := j.Job
		if _, err := s.cron.AddFunc(j.Spec, func() { s.RunOnce(job) }); err != nil {
			return nil, fmt.Errorf("schedule job %s (%q): %w", job.Name(), j.Spec, err)
		}
	}
	return s, nil
}

// Start begins running jobs; ctx bounds every run.
func (s *Scheduler) Start(ctx context.Context) {
	s.mu.Lock()
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.mu.Unlock()
	s.cron.Start()
}

// Stop stops scheduling, cancels running jobs and waits for them.
func (s *Scheduler) Stop() {
	s.mu.Lock()
	if s.cancel != nil {
		s.cancel()
	}
	s.mu.Unlock()
	<-s.cron.Stop().Done()
}

// RunOnce runs one job now, recording its metrics and logging its outcome.
func (s *Scheduler) RunOnce(j Job) {
	s.mu.Lock()
	ctx := s.ctx
	s.mu.Unlock()
	if ctx == nil {
		ctx = context.Background()
	}
	start := s.now()
	err := j.Run(ctx)
	d := s.now().Sub(start)
	result := "ok"
	if err != nil {
		result = "error"
		s.logger.Error("job failed", "job", j.Name(), "duration", d, "err", err)
	} else {
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
