package ingest

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/interval"
)

// Ledger is what an ingest writes to (ledger.DB and ledger.Memory).
type Ledger interface {
	Lock(ctx context.Context, cluster string, wait time.Duration) (release func(), err error)
	Watermark(ctx context.Context, cluster, source string) (meter.Watermark, bool, error)
	ReplaceAccruals(ctx context.Context, cluster string, asOf int64, runs []meter.MeasuredRun) (meter.WriteStats, error)
	ApplyBatch(ctx context.Context, cluster string, asOf int64, b meter.Batch) (meter.WriteStats, error)
	// AccrualRuns lists the runs that were running at the last ingest.
	AccrualRuns(ctx context.Context, cluster string) ([]meter.RunKey, error)
	// Pass and RecordPass read and store the last changes or verification pass.
	Pass(ctx context.Context, cluster, source, kind string) (meter.Pass, bool, error)
	RecordPass(ctx context.Context, cluster string, p meter.Pass) error
	// Coverage lists the end-time ranges ingested completely; Touched
	// those an ingest has started to write (it may hold lines there);
	// ClosedPeriods the closed periods.
	Coverage(ctx context.Context, cluster string) (interval.Set, error)
	Touched(ctx context.Context, cluster string) (interval.Set, error)
	ClosedPeriods(ctx context.Context, cluster string) ([]meter.Period, error)
}

// Auditor is a Ledger that keeps gpubridge's audit log (an accepted gap
// of purged job rows is written there).
type Auditor interface {
	Audit(ctx context.Context, cluster string, at time.Time, actor, action, object string, details any) error
}

// Defaults of an Ingester.
const (
	DefaultBatchRuns = 10000
	DefaultLookback  = 24 * time.Hour
	DefaultLockWait  = 30 * time.Second
	// DefaultChangesEvery is how often Scheduled re-reads the rows
	// slurmdbd changed: one full scan of the job table (mod_time has no
	// index), 1.3-1.7 s for 1M rows and 16.8 s for 10M on the testbed
	// (docs/chargeback.md).
	DefaultChangesEvery = time.Hour
	// DefaultVerifyEvery is how often Scheduled re-reads every open
	// period in full and compares it with the ledger.
	DefaultVerifyEvery = 24 * time.Hour
	// ChangesMargin is how far before the previous changes pass the next
	// one reads: slurmdbd stamps mod_time when it writes a row and commits
	// later, so a row may appear after a snapshot that its mod_time
	// precedes. Re-reading a few rows twice changes nothing.
	ChangesMargin = 10 * time.Minute
)

// Ingester runs ingests of one cluster from one source into one ledger.
type Ingester struct {
	Cluster string
	Source  Source
	Ledger  Ledger
	Rules   meter.TierRules
	// Clock is the host's clock (default time.Now). "As of" (running runs
	// are measured to it; it is the default end of the window) is the
	// source's clock when the source has one (Clocked) and can read it,
	// else Clock. Scheduled decides with Clock when a pass is due.
	Clock func() time.Time
	// UseHostClock measures as of Clock even when the source has a clock
	// (tests that ingest synthetic times). Changes passes still track the
	// source's clock, the one mod_time is written with.
	UseHostClock bool
	// BatchRuns is how many finished runs one transaction writes.
	BatchRuns int
	// Lookback is how far before the watermark a default window starts, to
	// pick up records slurmdbd wrote late (re-reading adds nothing).
	Lookback time.Duration
	// LockWait is how long to wait for another ingest or close.
	LockWait time.Duration
	// ChangesEvery and VerifyEvery are how often Scheduled adds a changes
	// pass and a verification (defaults DefaultChangesEvery and
	// DefaultVerifyEvery; negative: never).
	ChangesEvery, VerifyEvery time.Duration
	// Progress, when set, is called about once per batch and at the end.
	Progress func(Progress)
	// AcceptMissing, when set, ingests what the job table holds even though
	// the source finds GPU use without job rows (rows purged before they
	// were ingested) inside its hours: the operator has accepted that gap.
	// The missing use is logged, written to the audit log and reported in
	// Result.Missing, never billed. Missing use outside its hours still
	// fails the ingest with ErrMissingRows, and nothing is written.
	AcceptMissing *Accept
	Log           *slog.Logger
}

// Accept is a gap of purged job rows the operator accepted: GPU use
// without job rows in the hours [From, To) is not billed.
type Accept struct {
	From, To time.Time
	// Actor is who accepted it (the audit log's actor).
	Actor string
}

func (a *Accept) holds(m Missing) bool {
	return a != nil && m.From >= a.From.Unix() && m.To <= a.To.Unix()
}

// Window is an ingest's range of end times; zero fields take defaults
// (From: the watermark minus the lookback, or the start of the previous
// period before the first ingest; To: as of now).
type Window struct {
	From, To time.Time
	// Changes also re-reads, from a source that reads changes (SlurmDB),
	// the finished runs whose rows slurmdbd changed since the previous
	// changes pass, compares them with the ledger and records the pass.
	Changes bool
	// Verify records the ingest as a verification pass: the window is a
	// full re-read of the open periods (Scheduled sets From).
	Verify bool
}

// Progress describes a running ingest.
type Progress struct {
	From, To, At time.Time // window and the end time reached
	Runs         int       // finished runs read
	Lines        int       // lines written
	Done         bool
}

// Fraction is how far through the window the ingest is, 0..1.
func (p Progress) Fraction() float64 {
	if p.Done {
		return 1
	}
	total := p.To.Sub(p.From)
	if total <= 0 {
		return 0
	}
	return min(1, max(0, float64(p.At.Sub(p.From))/float64(total)))
}

// Result summarizes an ingest.
type Result struct {
	Source         string
	From, To, AsOf time.Time
	// Start says where the window starts and why (the first ingest of a
	// source starts at the previous period; later ones at the watermark
	// minus the lookback; or from= as given).
	Start    string
	Running  int // runs still running
	Finished int // finished runs read
	GPURuns  int // finished runs with GPU use
	// Changed is how many runs were read outside the window: runs that
	// were running at the last ingest and have ended since (by key), and
	// rows slurmdbd changed since the last changes pass (by mod_time).
	Changed int
	// Gone lists runs that were running at the last ingest and that the
	// job table no longer holds as running or finished (a row deleted, or
	// back to pending); their lines stay as they are.
	Gone []meter.RunKey
	// ChangesSince is the mod_time a changes pass read from (0: none).
	ChangesSince time.Time
	// Verified is true when this was a verification of the open periods.
	Verified bool
	Stats    meter.WriteStats
	Elapsed  time.Duration
	// ReadTime is how long the source took to deliver everything;
	// WriteTime how long the ledger spent writing batches (the two overlap).
	ReadTime, WriteTime time.Duration
	// ClockSkew is how far the source's clock was ahead of the host's (0
	// when the host's clock was used).
	ClockSkew time.Duration
	// Missing is GPU use without job rows that AcceptMissing let through.
	Missing []Missing
}

// Scheduled is the daemon's ingest: an incremental ingest (the default
// window: from the watermark minus the lookback), which also looks up the
// runs that were running at the last ingest and have ended outside the
// window; every ChangesEvery it adds a changes pass (the rows slurmdbd
// changed since the last one, by mod_time); every VerifyEvery it re-reads
// the open periods in full instead (a verification, with a changes pass).
// Before the first ingest of the source it is a plain first ingest.
func (in *Ingester) Scheduled(ctx context.Context) (Result, error) {
	now := in.now()
	due := func(kind string, every, def time.Duration) (bool, error) {
		every = cmp.Or(every, def)
		if every < 0 {
			return false, nil
		}
		p, ok, err := in.Ledger.Pass(ctx, in.Cluster, in.Source.Name(), kind)
		return err == nil && (!ok || now.Sub(time.Unix(p.Finished, 0)) >= every), err
	}
	wm, haveWM, err := in.Ledger.Watermark(ctx, in.Cluster, in.Source.Name())
	if err != nil || !haveWM {
		if err != nil {
			return Result{}, err
		}
		return in.Ingest(ctx, Window{})
	}
	w := Window{}
	if w.Changes, err = due(meter.PassChanges, in.ChangesEvery, DefaultChangesEvery); err != nil {
		return Result{}, err
	}
	verify, err := due(meter.PassVerify, in.VerifyEvery, DefaultVerifyEvery)
	if err != nil {
		return Result{}, err
	}
	if verify {
		if w.From, err = in.verifyFrom(ctx, now); err != nil {
			return Result{}, err
		}
		// Never less than the incremental window (the lookback may reach
		// into a period closed since).
		if lb := cmp.Or(in.Lookback, DefaultLookback); lb > 0 {
			w.From = unixUTC(min(w.From.Unix(), wm.Through-int64(lb/time.Second)))
		}
		w.Verify = true
	}
	return in.Ingest(ctx, w)
}

// verifyFrom is where a verification starts: the first open period of
// the previous and the current one, but not before the first range ever
// ingested (a verification does not extend the ledger backwards).
func (in *Ingester) verifyFrom(ctx context.Context, now time.Time) (time.Time, error) {
	closed, err := in.Ledger.ClosedPeriods(ctx, in.Cluster)
	if err != nil {
		return time.Time{}, err
	}
	p := meter.PeriodOf(now).Prev()
	if slices.Contains(closed, p) {
		p++
	}
	from := p.StartUnix()
	cov, err := in.Ledger.Coverage(ctx, in.Cluster)
	if err != nil {
		return time.Time{}, err
	}
	if len(cov) > 0 && cov[0].Start > from {
		from = cov[0].Start
	}
	return unixUTC(from), nil
}

func (in *Ingester) now() time.Time {
	if in.Clock == nil {
		return time.Now()
	}
	return in.Clock()
}

// Ingest reads the window and writes it to the ledger. It holds the ledger
// lock throughout. The running runs' accruals are replaced first, then the
// finished runs are written in batches, each committed with the watermark:
// an ingest killed at any point leaves the ledger consistent, and the next
// one resumes from the watermark. Runs read outside the window (Changed)
// are compared with the ledger in batches of their own that move nothing.
func (in *Ingester) Ingest(ctx context.Context, w Window) (Result, error) {
	started := time.Now()
	r := &ingestRun{in: in, w: w, log: in.logger()}
	release, err := in.Ledger.Lock(ctx, in.Cluster, cmp.Or(in.LockWait, DefaultLockWait))
	if err != nil {
		return Result{}, fmt.Errorf("ingest: %w", err)
	}
	defer release()

	r.readClocks(ctx)
	if err := r.plan(ctx); err != nil {
		return r.res, err
	}
	err = r.transfer(ctx)
	r.res.Elapsed = time.Since(started)
	if err != nil {
		return r.res, fmt.Errorf("ingest %s..%s: %w", r.res.From.Format(time.RFC3339), r.res.To.Format(time.RFC3339), err)
	}
	r.reportGone()
	if err := r.recordPasses(ctx); err != nil {
		return r.res, err
	}
	if in.Progress != nil {
		in.Progress(Progress{From: r.res.From, To: r.res.To, At: r.res.To, Runs: r.res.Finished, Lines: r.res.Stats.Lines, Done: true})
	}
	res := r.res
	r.log.Info("ingest done", "running", res.Running, "finished", res.Finished, "gpuRuns", res.GPURuns, "changed", res.Changed,
		"lines", res.Stats.Lines, "corrections", res.Stats.Corrections, "adjustments", res.Stats.Adjustments, "elapsed", res.Elapsed,
		"read", res.ReadTime, "write", res.WriteTime)
	return res, nil
}

// logger is the ingest's logger: Log (or a discarding one) with the
// component, cluster and source.
func (in *Ingester) logger() *slog.Logger {
	log := in.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return log.With("component", "ingest", "cluster", in.Cluster, "source", in.Source.Name())
}

func unixUTC(s int64) time.Time { return time.Unix(s, 0).UTC() }

// Unordered is a Source that delivers a window's finished runs in no
// particular order (SlurmDB: in the job table's own order, which spares
// the server a sort of the window). Its intermediate batches then commit
// lines but cover nothing; the window is covered, and the watermark
// moves, with its last batch. An ingest killed on the way leaves the
// window touched: the next one compares its runs with the ledger.
type Unordered interface {
	Unordered()
}

// freshParts returns the parts of window that touched leaves out, in
// order; never nil (Batch.Fresh: nil would leave the choice to the
// ledger).
func freshParts(window interval.Interval, touched interval.Set) interval.Set {
	fresh := interval.Of(window).Subtract(touched)
	if fresh == nil {
		fresh = interval.Set{}
	}
	return fresh
}
