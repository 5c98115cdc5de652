package burst

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// JobLister reads every job slurmctld holds, in one bulk read.
type JobLister interface {
	ListJobs(ctx context.Context) ([]Job, error)
}

// Mover moves one pending job to a partition and QOS and sets its admin
// comment, in one update, so that the job either carries the marker and its
// new place or neither.
type Mover interface {
	MoveJob(ctx context.Context, jobID int64, partition, qos, adminComment string) error
}

// TenantLister reads every tenant with its QOS, quota and burst policy.
type TenantLister interface {
	BurstTenants(ctx context.Context) ([]Tenant, error)
}

// SpendReader reads the booked on-demand spend per tenant in [from, to),
// minor units (the ledger's ondemand tier).
type SpendReader interface {
	OnDemandSpend(ctx context.Context, from, to time.Time) (map[string]int64, error)
}

// RateReader reads the on-demand rate per GPU type in force at a time.
type RateReader interface {
	OnDemandRates(ctx context.Context, at time.Time) (Rates, error)
}

// MoveRecord is one move as stored: what gpubridge moved, when and why.
type MoveRecord struct {
	JobID       int64
	Tenant      string
	User        string
	GPUs        string // Request.String()
	GPUCount    int64
	MovedAt     time.Time // the marker's time: the idempotency key with JobID
	SlurmReason string
	Estimate    int64
	SubmitTime  time.Time
}

// Store keeps the controller's records: moves (insert-only, keyed by job and
// move time, so recording one again is a no-op) and the current refusals.
type Store interface {
	// RecordMoves inserts the moves not yet stored; it returns how many
	// were new.
	RecordMoves(ctx context.Context, at time.Time, ms []MoveRecord) (int, error)
	// SyncRefusals makes the stored refusals equal to rs (jobs no longer
	// refused are removed) and returns the refusals that are new or whose
	// reason changed.
	SyncRefusals(ctx context.Context, at time.Time, rs []Refusal) ([]Refusal, error)
}

// Recorder receives the controller's events for metrics.
type Recorder interface {
	Moved(tenant string, gpus int64, reaction time.Duration)
	Refused(tenant string, r Reason)
	MoveFailed(tenant string)
	Observe(p Plan)
}

// Controller is the burst controller: a daemon.Job run every few seconds.
type Controller struct {
	Config   Config
	Jobs     JobLister
	Mover    Mover
	Tenants  TenantLister
	Spend    SpendReader
	Rates    RateReader
	Store    Store
	Recorder Recorder // optional
	Logger   *slog.Logger
	Now      func() time.Time // default time.Now
	// AfterMove, when set, is called after each successful move write and
	// before the move is recorded (tests use it to kill the process
	// mid-cycle).
	AfterMove func(n int)
}

// Result sums up one cycle.
type Result struct {
	Plan   Plan
	Moved  []Move
	Failed []Refusal // moves slurmctld refused
	// Adopted counts moves found in Slurm (by their marker) that the store
	// did not have: a previous cycle was killed between write and record.
	Adopted int
}

// Name is the daemon job's name.
func (c *Controller) Name() string { return "burst" }

// Run is one cycle: read, decide, move, record.
func (c *Controller) Run(ctx context.Context) error {
	_, err := c.Cycle(ctx)
	return err
}

func (c *Controller) now() time.Time {
	if c.Now != nil {
		return c.Now().UTC()
	}
	return time.Now().UTC()
}

func (c *Controller) log() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// MonthStart is the first instant of t's month, UTC.
func MonthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// Plan reads the current state and decides, without writing anything.
func (c *Controller) Plan(ctx context.Context) (Plan, error) {
	now := c.now()
	tenants, err := c.Tenants.BurstTenants(ctx)
	if err != nil {
		return Plan{}, fmt.Errorf("burst: read tenants: %w", err)
	}
	jobs, err := c.Jobs.ListJobs(ctx)
	if err != nil {
		return Plan{}, fmt.Errorf("burst: list jobs: %w", err)
	}
	spent, err := c.Spend.OnDemandSpend(ctx, MonthStart(now), now)
	if err != nil {
		return Plan{}, fmt.Errorf("burst: read on-demand spend: %w", err)
	}
	rates, err := c.Rates.OnDemandRates(ctx, now)
	if err != nil {
		return Plan{}, fmt.Errorf("burst: read on-demand rates: %w", err)
	}
	return Decide(Input{Now: now, Config: c.Config, Tenants: tenants, Jobs: jobs, Spent: spent, Rates: rates}), nil
}

// Cycle runs one cycle and reports what it did.
func (c *Controller) Cycle(ctx context.Context) (Result, error) {
	plan, err := c.Plan(ctx)
	if err != nil {
		return Result{}, err
	}
	res := Result{Plan: plan}
	now := c.now()
	if err := c.adopt(ctx, now, &res); err != nil {
		return res, err
	}
	errs := c.move(ctx, now, &res)
	if err := c.syncRefusals(ctx, now, &res); err != nil {
		errs = append(errs, err)
	}
	if c.Recorder != nil {
		c.Recorder.Observe(plan)
	}
	return res, errors.Join(errs...)
}

// adopt records the moves written by a cycle that died before recording
// them: they carry the marker (a no-op for those already stored).
func (c *Controller) adopt(ctx context.Context, now time.Time, res *Result) error {
	var adopt []MoveRecord
	for _, b := range res.Plan.Bursting {
		if b.Moved {
			adopt = append(adopt, MoveRecord{
				JobID: b.JobID, Tenant: b.Tenant, User: b.User, GPUs: b.GPUs.String(), GPUCount: b.GPUs.Total(),
				MovedAt: b.Marker.Moved, SlurmReason: b.Marker.Reason, Estimate: b.Marker.Estimate,
			})
		}
	}
	if len(adopt) == 0 {
		return nil
	}
	n, err := c.Store.RecordMoves(ctx, now, adopt)
	if err != nil {
		return fmt.Errorf("burst: record moves found in Slurm: %w", err)
	}
	res.Adopted = n
	if n > 0 {
		c.log().Warn("recorded moves a previous cycle wrote but did not record", "count", n)
	}
	return nil
}

// move writes the plan's moves to slurmctld, one job at a time until the
// context ends, and records the ones done; a move slurmctld refuses is a
// failure of the result (its job stays pending).
func (c *Controller) move(ctx context.Context, now time.Time, res *Result) []error {
	log := c.log()
	var records []MoveRecord
	var errs []error
	for _, m := range res.Plan.Moves {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		err := c.Mover.MoveJob(ctx, m.Job.ID, c.Config.OnDemandPartition, c.Config.OnDemandQOS, m.AdminComment)
		if err != nil {
			log.Warn("move refused by slurmctld", "job", m.Job.ID, "tenant", m.Tenant, "err", err)
			res.Failed = append(res.Failed, Refusal{
				JobID: m.Job.ID, Tenant: m.Tenant, User: m.Job.User, GPUs: m.GPUs, Reason: MoveFailed,
				Detail: err.Error(), SlurmReason: m.Job.Reason,
			})
			if c.Recorder != nil {
				c.Recorder.MoveFailed(m.Tenant)
			}
			continue
		}
		res.Moved = append(res.Moved, m)
		if c.AfterMove != nil {
			c.AfterMove(len(res.Moved))
		}
		records = append(records, MoveRecord{
			JobID: m.Job.ID, Tenant: m.Tenant, User: m.Job.User, GPUs: m.GPUs.String(), GPUCount: m.GPUs.Total(),
			MovedAt: m.Marker.Moved, SlurmReason: m.Job.Reason, Estimate: m.Estimate, SubmitTime: m.Job.SubmitTime,
		})
		c.moved(now, m)
	}
	if len(records) > 0 {
		if _, err := c.Store.RecordMoves(ctx, now, records); err != nil {
			errs = append(errs, fmt.Errorf("burst: record moves: %w", err))
		}
	}
	return errs
}

// moved logs a move done and counts it, with the time from the job's
// being ready to its move.
func (c *Controller) moved(now time.Time, m Move) {
	reaction := now.Sub(readySince(m.Job))
	c.log().Info("moved job to on-demand", "job", m.Job.ID, "tenant", m.Tenant, "user", m.Job.User,
		"gpus", m.GPUs.String(), "reason", m.Job.Reason, "estimate", m.Estimate, "reaction", reaction.Round(time.Millisecond))
	if c.Recorder != nil {
		c.Recorder.Moved(m.Tenant, m.GPUs.Total(), reaction)
	}
}

// syncRefusals stores the jobs that stay pending (the plan's refusals and
// the failed moves), and logs and counts those whose refusal changed.
func (c *Controller) syncRefusals(ctx context.Context, now time.Time, res *Result) error {
	refusals := append(append([]Refusal(nil), res.Plan.Refusals...), res.Failed...)
	changed, err := c.Store.SyncRefusals(ctx, now, refusals)
	if err != nil {
		err = fmt.Errorf("burst: record refusals: %w", err)
	}
	for _, r := range changed {
		c.log().Info("job stays pending", "job", r.JobID, "tenant", r.Tenant, "reason", r.Reason, "detail", r.Detail)
		if c.Recorder != nil && r.Reason != MoveFailed {
			c.Recorder.Refused(r.Tenant, r.Reason)
		}
	}
	return err
}

// readySince is when the job could first have been moved: its eligible time
// (after --begin, dependencies), else its submit time.
func readySince(j Job) time.Time {
	t := j.SubmitTime
	if j.EligibleTime.After(t) {
		t = j.EligibleTime
	}
	return t
}
