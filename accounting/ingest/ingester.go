package ingest

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

// Ledger is what an ingest writes to (ledger.DB and ledger.Memory).
type Ledger interface {
	Lock(ctx context.Context, cluster string, wait time.Duration) (release func(), err error)
	Watermark(ctx context.Context, cluster, source string) (meter.Watermark, bool, error)
	ReplaceAccruals(ctx context.Context, cluster string, asOf int64, runs []meter.MeasuredRun) (meter.WriteStats, error)
	ApplyBatch(ctx context.Context, cluster string, asOf int64, b meter.Batch) (meter.WriteStats, error)
}

// Defaults of an Ingester.
const (
	DefaultBatchRuns = 10000
	DefaultLookback  = 24 * time.Hour
	DefaultLockWait  = 30 * time.Second
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
	// else Clock.
	Clock func() time.Time
	// UseHostClock measures as of Clock even when the source has a clock
	// (tests that ingest synthetic times).
	UseHostClock bool
	// BatchRuns is how many finished runs one transaction writes.
	BatchRuns int
	// Lookback is how far before the watermark a default window starts, to
	// pick up records slurmdbd wrote late (re-reading adds nothing).
	Lookback time.Duration
	// LockWait is how long to wait for another ingest or close.
	LockWait time.Duration
	// Progress, when set, is called about once per batch and at the end.
	Progress func(Progress)
	// AcceptMissing ingests what the job table holds even when the source
	// finds GPU use without job rows (rows purged before they were
	// ingested); the missing use is logged and in Result.Missing, never
	// billed. Without it such an ingest fails with ErrMissingRows and
	// writes nothing.
	AcceptMissing bool
	Log           *slog.Logger
}

// Window is an ingest's range of end times; zero fields take defaults
// (From: the watermark minus the lookback, or the start of the previous
// period before the first ingest; To: as of now).
type Window struct{ From, To time.Time }

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
	Running        int // runs still running
	Finished       int // finished runs read
	GPURuns        int // finished runs with GPU use
	Stats          meter.WriteStats
	Elapsed        time.Duration
	// ClockSkew is how far the source's clock was ahead of the host's (0
	// when the host's clock was used).
	ClockSkew time.Duration
	// Missing is GPU use without job rows that AcceptMissing let through.
	Missing []Missing
}

// Ingest reads the window and writes it to the ledger. It holds the ledger
// lock throughout. The running runs' accruals are replaced first, then the
// finished runs are written in batches, each committed with the watermark:
// an ingest killed at any point leaves the ledger consistent, and the next
// one resumes from the watermark.
func (in *Ingester) Ingest(ctx context.Context, w Window) (Result, error) {
	started := time.Now()
	clock := in.Clock
	if clock == nil {
		clock = time.Now
	}
	log := in.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "ingest", "cluster", in.Cluster, "source", in.Source.Name())
	release, err := in.Ledger.Lock(ctx, in.Cluster, cmp.Or(in.LockWait, DefaultLockWait))
	if err != nil {
		return Result{}, fmt.Errorf("ingest: %w", err)
	}
	defer release()

	asOf := clock().UTC().Truncate(time.Second)
	var skew time.Duration
	if c, ok := in.Source.(Clocked); ok && !in.UseHostClock {
		if src, err := c.Now(ctx); err != nil {
			log.Warn("cannot read the source's clock; measuring as of the host's", "error", err)
		} else {
			src = src.UTC().Truncate(time.Second)
			if skew = src.Sub(asOf); skew > time.Minute || skew < -time.Minute {
				log.Warn("the host's clock differs from the source's; measuring as of the source's", "source_ahead_by", skew)
			}
			asOf = src
		}
	}
	res := Result{Source: in.Source.Name(), AsOf: asOf, ClockSkew: skew}
	q := Query{To: asOf.Unix()}
	if !w.To.IsZero() {
		q.To = min(w.To.Unix(), q.To)
	}
	wm, haveWM, err := in.Ledger.Watermark(ctx, in.Cluster, in.Source.Name())
	if err != nil {
		return res, err
	}
	switch {
	case !w.From.IsZero():
		q.From = w.From.Unix()
	case haveWM:
		lookback := in.Lookback
		if lookback == 0 {
			lookback = DefaultLookback
		}
		q.From = wm.Through - int64(lookback/time.Second)
		if lookback < 0 {
			q.From = wm.Through
		}
	default:
		q.From = meter.PeriodOf(asOf).Prev().StartUnix()
	}
	if haveWM && q.From == wm.Through {
		q.After = wm.After
	}
	// Hours before the watermark were checked for purged rows when they
	// were first ingested; re-reading them (the lookback) checks nothing.
	q.CheckFrom = q.From
	if haveWM {
		q.CheckFrom = max(q.From, wm.Through)
	}
	if q.From > q.To {
		return res, fmt.Errorf("ingest: window starts %s, after its end %s", unixUTC(q.From), unixUTC(q.To))
	}
	res.From, res.To = unixUTC(q.From), unixUTC(q.To)
	log.Info("ingest start", "from", res.From, "to", res.To, "asOf", asOf)

	// The writer runs beside the reader, so reading and writing overlap.
	batchRuns := cmp.Or(in.BatchRuns, DefaultBatchRuns)
	batches := make(chan meter.Batch, 2)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type written struct {
		st  meter.WriteStats
		err error
	}
	wdone := make(chan written, 1)
	var finished atomic.Int64
	go func() {
		var w written
		for b := range batches {
			if w.err != nil {
				continue // drain
			}
			st, err := in.Ledger.ApplyBatch(ctx, in.Cluster, asOf.Unix(), b)
			if err != nil {
				w.err = err
				cancel()
				continue
			}
			w.st = w.st.Add(st)
			if in.Progress != nil {
				in.Progress(Progress{From: res.From, To: res.To, At: unixUTC(b.Through), Runs: int(finished.Load()), Lines: w.st.Lines})
			}
		}
		wdone <- w
	}()

	cur := meter.Batch{Source: in.Source.Name(), From: q.From, Through: q.From}
	var lastEnd int64
	var lastTie uint64
	h := Handler{
		Missing: func(ms []Missing) error {
			if !in.AcceptMissing {
				return &MissingError{Missing: ms}
			}
			res.Missing = ms
			for _, m := range ms {
				log.Warn("GPU use without job rows, not billed (accept missing)", "missing", m.String())
			}
			return nil
		},
		Running: func(runs []meter.Run) error {
			res.Running = len(runs)
			mrs := make([]meter.MeasuredRun, 0, len(runs))
			for _, r := range runs {
				if us := meter.Split(r, asOf.Unix(), in.Rules); len(us) > 0 {
					mrs = append(mrs, meter.MeasuredRun{Run: r, Usages: us})
				}
			}
			st, err := in.Ledger.ReplaceAccruals(ctx, in.Cluster, asOf.Unix(), mrs)
			res.Stats = res.Stats.Add(st)
			return err
		},
		Finished: func(r meter.Run, tie uint64) error {
			res.Finished++
			finished.Add(1)
			lastEnd, lastTie = r.End, tie
			if us := meter.Split(r, asOf.Unix(), in.Rules); len(us) > 0 {
				res.GPURuns++
				cur.Runs = append(cur.Runs, meter.MeasuredRun{Run: r, Usages: us})
			}
			if len(cur.Runs) < batchRuns {
				return nil
			}
			cur.Through, cur.After, cur.CoveredTo = lastEnd, lastTie, lastEnd+1
			select {
			case batches <- cur:
			case <-ctx.Done():
				return ctx.Err()
			}
			cur = meter.Batch{Source: cur.Source, From: q.From, Through: lastEnd, After: lastTie}
			return nil
		},
	}
	rerr := in.Source.Read(ctx, q, h)
	if rerr == nil {
		// The window is done: everything that ended before q.To is written.
		cur.Through, cur.After = q.To, 0
		select {
		case batches <- cur:
		case <-ctx.Done():
		}
	}
	close(batches)
	wr := <-wdone
	res.Stats = res.Stats.Add(wr.st)
	res.Elapsed = time.Since(started)
	if err = cmp.Or(wr.err, rerr); err != nil { // a writer error cancels the reader: report the cause
		return res, fmt.Errorf("ingest %s..%s: %w", res.From.Format(time.RFC3339), res.To.Format(time.RFC3339), err)
	}
	if in.Progress != nil {
		in.Progress(Progress{From: res.From, To: res.To, At: res.To, Runs: res.Finished, Lines: res.Stats.Lines, Done: true})
	}
	log.Info("ingest done", "running", res.Running, "finished", res.Finished, "gpuRuns", res.GPURuns,
		"lines", res.Stats.Lines, "corrections", res.Stats.Corrections, "adjustments", res.Stats.Adjustments, "elapsed", res.Elapsed)
	return res, nil
}

func unixUTC(s int64) time.Time { return time.Unix(s, 0).UTC() }
