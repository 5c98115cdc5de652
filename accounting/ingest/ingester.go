package ingest

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
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
	// AccrualRuns lists the runs that were running at the last ingest.
	AccrualRuns(ctx context.Context, cluster string) ([]meter.RunKey, error)
	// Pass and RecordPass read and store the last changes or verification pass.
	Pass(ctx context.Context, cluster, source, kind string) (meter.Pass, bool, error)
	RecordPass(ctx context.Context, cluster string, p meter.Pass) error
	// Coverage lists the end-time ranges ingested completely; Touched
	// those an ingest has started to write (it may hold lines there);
	// ClosedPeriods the closed periods.
	Coverage(ctx context.Context, cluster string) ([][2]int64, error)
	Touched(ctx context.Context, cluster string) ([][2]int64, error)
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
	if len(cov) > 0 && cov[0][0] > from {
		from = cov[0][0]
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

	asOf := in.now().UTC().Truncate(time.Second)
	srcNow := asOf // the source's clock: mod_time's
	var skew time.Duration
	if c, ok := in.Source.(Clocked); ok {
		if src, err := c.Now(ctx); err != nil {
			log.Warn("cannot read the source's clock; measuring as of the host's", "error", err)
		} else {
			srcNow = src.UTC().Truncate(time.Second)
			if !in.UseHostClock {
				if skew = srcNow.Sub(asOf); skew > time.Minute || skew < -time.Minute {
					log.Warn("the host's clock differs from the source's; measuring as of the source's", "source_ahead_by", skew)
				}
				asOf = srcNow
			}
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
	lookback := cmp.Or(in.Lookback, DefaultLookback)
	switch {
	case !w.From.IsZero():
		q.From = w.From.Unix()
		res.Start = "from= as given"
		if w.Verify {
			res.Start = "the start of the first open period (a verification)"
		}
	case haveWM:
		q.From = wm.Through - int64(lookback/time.Second)
		res.Start = fmt.Sprintf("%s before the watermark %s (records slurmdbd wrote late)", lookback, unixUTC(wm.Through).Format(time.RFC3339))
		if lookback < 0 {
			q.From = wm.Through
			res.Start = "the watermark"
		}
	default:
		p := meter.PeriodOf(asOf).Prev()
		q.From = p.StartUnix()
		res.Start = fmt.Sprintf("the start of the previous period %s: this is the first ingest from %s into this ledger, and starting there lets %s be closed; give from= to start earlier",
			p, in.Source.Name(), p)
	}
	_, unordered := in.Source.(Unordered)
	if haveWM && q.From == wm.Through && !unordered {
		q.After = wm.After
	}
	// The parts of the window no ingest has touched: runs that end there
	// are inserted without a lookup. Where the window re-reads runs the
	// ledger may hold, every run is read, with GPUs or not, and compared.
	touched, err := in.Ledger.Touched(ctx, in.Cluster)
	if err != nil {
		return res, err
	}
	fresh := freshRanges(q.From, q.To, touched)
	freshCov := ranges(fresh)
	q.AllRows = w.Verify || len(fresh) != 1 || fresh[0] != [2]int64{q.From, q.To}
	// Hours before the watermark were checked for purged rows when they
	// were first ingested; re-reading them (the lookback) checks nothing.
	q.CheckFrom = q.From
	if haveWM {
		q.CheckFrom = max(q.From, wm.Through)
	}
	if q.From > q.To {
		return res, fmt.Errorf("ingest: window starts %s, after its end %s", unixUTC(q.From), unixUTC(q.To))
	}
	// Changes: the runs that were running at the last ingest, by key, and
	// (a changes pass) the rows changed since the last pass, by mod_time.
	reads := false
	if cr, ok := in.Source.(ChangeReader); ok && cr.ReadsChanges() {
		reads = true
		if q.Lookup, err = in.Ledger.AccrualRuns(ctx, in.Cluster); err != nil {
			return res, err
		}
	}
	prevChanges, trackingChanges, err := in.Ledger.Pass(ctx, in.Cluster, in.Source.Name(), meter.PassChanges)
	if err != nil {
		return res, err
	}
	if w.Changes && reads && trackingChanges {
		q.ChangedSince = prevChanges.AsOf - int64(ChangesMargin/time.Second)
		res.ChangesSince = unixUTC(q.ChangedSince)
	}
	res.From, res.To = unixUTC(q.From), unixUTC(q.To)
	log.Info("ingest start", "from", res.From, "to", res.To, "asOf", asOf, "start", res.Start, "allRows", q.AllRows,
		"lookups", len(q.Lookup), "changedSince", res.ChangesSince)

	// The writer runs beside the reader, so reading and writing overlap.
	batchRuns := cmp.Or(in.BatchRuns, DefaultBatchRuns)
	batches := make(chan meter.Batch, 2)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type written struct {
		st   meter.WriteStats
		busy time.Duration
		err  error
	}
	wdone := make(chan written, 1)
	var finished atomic.Int64
	go func() {
		var w written
		for b := range batches {
			if w.err != nil {
				continue // drain
			}
			t0 := time.Now()
			st, err := in.Ledger.ApplyBatch(ctx, in.Cluster, asOf.Unix(), b)
			w.busy += time.Since(t0)
			if err != nil {
				w.err = err
				cancel()
				continue
			}
			w.st = w.st.Add(st)
			if in.Progress != nil && !b.CheckAll {
				in.Progress(Progress{From: res.From, To: res.To, At: unixUTC(max(b.Through, b.ReachedEnd)), Runs: int(finished.Load()), Lines: w.st.Lines})
			}
		}
		wdone <- w
	}()
	send := func(b meter.Batch) error {
		select {
		case batches <- b:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	measure := func(r meter.Run) meter.MeasuredRun {
		return meter.MeasuredRun{Run: r, Usages: meter.Split(r, asOf.Unix(), in.Rules)}
	}

	// seen: the lookups delivered as running or in the window.
	lookup := make(map[meter.RunKey]bool, len(q.Lookup))
	for _, k := range q.Lookup {
		lookup[k] = false
	}
	mark := func(k meter.RunKey) {
		if _, ok := lookup[k]; ok {
			lookup[k] = true
		}
	}
	window := meter.Batch{Source: in.Source.Name(), From: q.From, Through: q.From, Touch: [2]int64{q.From, q.To}, Fresh: fresh}
	cur := window
	cur.Runs = make([]meter.MeasuredRun, 0, min(batchRuns, 1024))
	changed := meter.Batch{CheckAll: true}
	var lastEnd, maxEnd int64
	var lastTie uint64
	h := Handler{
		Missing: func(ms []Missing) error {
			var refused []Missing
			for _, m := range ms {
				if !in.AcceptMissing.holds(m) {
					refused = append(refused, m)
				}
			}
			if len(refused) > 0 {
				return &MissingError{Missing: refused}
			}
			res.Missing = ms
			for _, m := range ms {
				log.Warn("GPU use without job rows, not billed (gap accepted)", "missing", m.String(), "actor", in.AcceptMissing.Actor)
			}
			if a, ok := in.Ledger.(Auditor); ok {
				gap := map[string]any{"from": in.AcceptMissing.From.UTC().Format(time.RFC3339), "to": in.AcceptMissing.To.UTC().Format(time.RFC3339),
					"source": in.Source.Name(), "missing": ms}
				if err := a.Audit(ctx, in.Cluster, time.Now(), in.AcceptMissing.Actor, "accept-missing", in.Cluster+"/"+in.Source.Name(), gap); err != nil {
					return fmt.Errorf("record the accepted gap: %w", err)
				}
			}
			return nil
		},
		Running: func(runs []meter.Run) error {
			res.Running = len(runs)
			mrs := make([]meter.MeasuredRun, 0, len(runs))
			for _, r := range runs {
				mark(r.Key)
				if mr := measure(r); len(mr.Usages) > 0 {
					mrs = append(mrs, mr)
				}
			}
			st, err := in.Ledger.ReplaceAccruals(ctx, in.Cluster, asOf.Unix(), mrs)
			res.Stats = res.Stats.Add(st)
			return err
		},
		Finished: func(r meter.Run, tie uint64) error {
			res.Finished++
			finished.Add(1)
			mark(r.Key)
			lastEnd, lastTie, maxEnd = r.End, tie, max(maxEnd, r.End)
			// A run without usage is still handed over: the ledger may
			// hold lines for it that must now be reversed (it decides
			// whether a lookup is needed).
			mr := measure(r)
			if len(mr.Usages) > 0 {
				res.GPURuns++
			} else if freshCov.contains(r.End) && !r.CrossedPeriodEnd(asOf.Unix()) {
				return nil // no usage, and no ingest can have written lines for it
			}
			cur.Runs = append(cur.Runs, mr)
			if len(cur.Runs) < batchRuns {
				return nil
			}
			// An ordered source's batch covers what has ended so far; an
			// unordered one's covers nothing until the window is complete
			// (its Touch marks the window as possibly holding lines).
			if !unordered {
				cur.Through, cur.After, cur.CoveredTo = lastEnd, lastTie, lastEnd+1
			}
			cur.ReachedEnd = maxEnd
			if err := send(cur); err != nil {
				return err
			}
			next := window
			if !unordered {
				next.Through, next.After = lastEnd, lastTie
			}
			next.Runs = make([]meter.MeasuredRun, 0, batchRuns)
			cur = next
			return nil
		},
		Changed: func(r meter.Run) error {
			res.Changed++
			mark(r.Key)
			changed.Runs = append(changed.Runs, measure(r))
			if len(changed.Runs) < batchRuns {
				return nil
			}
			err := send(changed)
			changed = meter.Batch{CheckAll: true}
			return err
		},
	}
	readStart := time.Now()
	rerr := in.Source.Read(ctx, q, h)
	res.ReadTime = time.Since(readStart)
	if rerr == nil {
		// The window is done: everything that ended before q.To is written.
		cur.Through, cur.After = q.To, 0
		if err := send(cur); err == nil && len(changed.Runs) > 0 {
			_ = send(changed)
		}
	}
	close(batches)
	wr := <-wdone
	res.Stats = res.Stats.Add(wr.st)
	res.WriteTime = wr.busy
	res.Elapsed = time.Since(started)
	if err = cmp.Or(wr.err, rerr); err != nil { // a writer error cancels the reader: report the cause
		return res, fmt.Errorf("ingest %s..%s: %w", res.From.Format(time.RFC3339), res.To.Format(time.RFC3339), err)
	}
	for k, seen := range lookup {
		if !seen {
			res.Gone = append(res.Gone, k)
		}
	}
	slices.SortFunc(res.Gone, meter.RunKey.Compare)
	for _, k := range res.Gone {
		log.Warn("a run that was running at the last ingest is neither running nor finished in the job table now (row deleted, or pending again); its lines stay as they are", "run", k.String())
	}
	// Passes: a changes pass (or the first ingest, which starts tracking
	// changes from its snapshot on) and a verification.
	pass := meter.Pass{Source: in.Source.Name(), Finished: in.now().Unix(), Runs: res.Finished + res.Changed, Lines: res.Stats.Lines, Corrections: res.Stats.Corrections}
	if reads && (q.ChangedSince != 0 || !trackingChanges) {
		p := pass
		p.Kind, p.AsOf, p.From = meter.PassChanges, srcNow.Unix(), cmp.Or(q.ChangedSince, srcNow.Unix())
		if err := in.Ledger.RecordPass(ctx, in.Cluster, p); err != nil {
			return res, err
		}
	}
	if w.Verify {
		p := pass
		p.Kind, p.AsOf, p.From = meter.PassVerify, asOf.Unix(), q.From
		if err := in.Ledger.RecordPass(ctx, in.Cluster, p); err != nil {
			return res, err
		}
		res.Verified = true
	}
	if in.Progress != nil {
		in.Progress(Progress{From: res.From, To: res.To, At: res.To, Runs: res.Finished, Lines: res.Stats.Lines, Done: true})
	}
	log.Info("ingest done", "running", res.Running, "finished", res.Finished, "gpuRuns", res.GPURuns, "changed", res.Changed,
		"lines", res.Stats.Lines, "corrections", res.Stats.Corrections, "adjustments", res.Stats.Adjustments, "elapsed", res.Elapsed,
		"read", res.ReadTime, "write", res.WriteTime)
	return res, nil
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

// freshRanges returns the parts of [from, to) that touched (sorted,
// disjoint ranges) leaves out, in order.
func freshRanges(from, to int64, touched [][2]int64) [][2]int64 {
	out := [][2]int64{}
	for _, r := range touched {
		if r[1] <= from || r[0] >= to {
			continue
		}
		if r[0] > from {
			out = append(out, [2]int64{from, r[0]})
		}
		from = max(from, r[1])
	}
	if from < to {
		out = append(out, [2]int64{from, to})
	}
	return out
}

// ranges is a sorted set of disjoint half-open ranges of end times.
type ranges [][2]int64

func (rs ranges) contains(t int64) bool {
	i, _ := slices.BinarySearchFunc(rs, t, func(r [2]int64, t int64) int { return cmp.Compare(r[0], t) })
	if i < len(rs) && rs[i][0] == t {
		return true
	}
	return i > 0 && t < rs[i-1][1]
}
