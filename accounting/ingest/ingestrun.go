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
	"github.com/gpubridge/gpubridge/internal/interval"
)

// ingestRun is one Ingest under way: its window and query, the result it
// builds, and the batches the reader hands to the writer.
type ingestRun struct {
	in  *Ingester
	w   Window
	log *slog.Logger

	// asOf is the time running runs are measured to; srcNow the source's
	// clock (mod_time's), which the changes pass records.
	asOf, srcNow time.Time
	q            Query
	res          Result
	// unordered: the source delivers the window in no order (Unordered).
	unordered bool
	// reads: the source reads changes (ChangeReader); trackingChanges: a
	// changes pass was recorded before.
	reads, trackingChanges bool
	// fresh holds the parts of the window no ingest had touched.
	fresh interval.Set

	// What the reader builds: the lookups it has seen delivered, the batch
	// of the window (window is its template) and of the changed runs, and
	// the last end (and tie) and latest end of the finished runs.
	lookup               map[meter.RunKey]bool
	window, cur, changed meter.Batch
	batchRuns            int
	lastEnd, maxEnd      int64
	lastTie              uint64
	// batches carries the reader's batches to the writer; finished counts
	// the finished runs read, for the writer's progress reports.
	batches  chan meter.Batch
	finished atomic.Int64
}

// readClocks sets "as of": the host's clock, or the source's when it has
// one that answers (unless UseHostClock); srcNow is the source's clock
// whenever it answers.
func (r *ingestRun) readClocks(ctx context.Context) {
	asOf := r.in.now().UTC().Truncate(time.Second)
	srcNow := asOf // the source's clock: mod_time's
	var skew time.Duration
	if c, ok := r.in.Source.(Clocked); ok {
		if src, err := c.Now(ctx); err != nil {
			r.log.Warn("cannot read the source's clock; measuring as of the host's", "error", err)
		} else {
			srcNow = src.UTC().Truncate(time.Second)
			if !r.in.UseHostClock {
				if skew = srcNow.Sub(asOf); skew > time.Minute || skew < -time.Minute {
					r.log.Warn("the host's clock differs from the source's; measuring as of the source's", "source_ahead_by", skew)
				}
				asOf = srcNow
			}
		}
	}
	r.asOf, r.srcNow = asOf, srcNow
	r.res = Result{Source: r.in.Source.Name(), AsOf: asOf, ClockSkew: skew}
}

// plan builds the query: the window's bounds, which of its parts are
// fresh, where to check for purged rows, and the changes to read besides.
func (r *ingestRun) plan(ctx context.Context) error {
	q := &r.q
	q.To = r.asOf.Unix()
	if !r.w.To.IsZero() {
		q.To = min(r.w.To.Unix(), q.To)
	}
	wm, haveWM, err := r.in.Ledger.Watermark(ctx, r.in.Cluster, r.in.Source.Name())
	if err != nil {
		return err
	}
	r.start(wm, haveWM)
	_, r.unordered = r.in.Source.(Unordered)
	if haveWM && q.From == wm.Through && !r.unordered {
		q.After = wm.After
	}
	if err := r.findFresh(ctx); err != nil {
		return err
	}
	// Hours before the watermark were checked for purged rows when they
	// were first ingested; re-reading them (the lookback) checks nothing.
	q.CheckFrom = q.From
	if haveWM {
		q.CheckFrom = max(q.From, wm.Through)
	}
	if q.From > q.To {
		return fmt.Errorf("ingest: window starts %s, after its end %s", unixUTC(q.From), unixUTC(q.To))
	}
	if err := r.planChanges(ctx); err != nil {
		return err
	}
	r.res.From, r.res.To = unixUTC(q.From), unixUTC(q.To)
	r.window = meter.Batch{Source: r.in.Source.Name(), From: q.From, Through: q.From, Touch: r.fullWindow(), Fresh: r.fresh}
	r.log.Info("ingest start", "from", r.res.From, "to", r.res.To, "asOf", r.asOf, "start", r.res.Start, "allRows", q.AllRows,
		"lookups", len(q.Lookup), "changedSince", r.res.ChangesSince)
	return nil
}

// start sets where the window starts, and says why in Result.Start: from=
// as given, the watermark minus the lookback, or (the first ingest of the
// source) the start of the previous period.
func (r *ingestRun) start(wm meter.Watermark, haveWM bool) {
	lookback := cmp.Or(r.in.Lookback, DefaultLookback)
	switch {
	case !r.w.From.IsZero():
		r.q.From = r.w.From.Unix()
		r.res.Start = "from= as given"
		if r.w.Verify {
			r.res.Start = "the start of the first open period (a verification)"
		}
	case haveWM:
		r.q.From = wm.Through - int64(lookback/time.Second)
		r.res.Start = fmt.Sprintf("%s before the watermark %s (records slurmdbd wrote late)", lookback, unixUTC(wm.Through).Format(time.RFC3339))
		if lookback < 0 {
			r.q.From = wm.Through
			r.res.Start = "the watermark"
		}
	default:
		p := meter.PeriodOf(r.asOf).Prev()
		r.q.From = p.StartUnix()
		r.res.Start = fmt.Sprintf("the start of the previous period %s: this is the first ingest from %s into this ledger, and starting there lets %s be closed; give from= to start earlier",
			p, r.in.Source.Name(), p)
	}
}

// fullWindow is the ingest's whole window of end times, [From, To).
func (r *ingestRun) fullWindow() interval.Interval {
	return interval.Interval{Start: r.q.From, End: r.q.To}
}

// findFresh finds the parts of the window no ingest has touched: runs
// that end there are inserted without a lookup. Where the window re-reads
// runs the ledger may hold, every run is read, with GPUs or not, and
// compared (Query.AllRows).
func (r *ingestRun) findFresh(ctx context.Context) error {
	touched, err := r.in.Ledger.Touched(ctx, r.in.Cluster)
	if err != nil {
		return err
	}
	r.fresh = freshParts(r.fullWindow(), touched)
	r.q.AllRows = r.w.Verify || len(r.fresh) != 1 || r.fresh[0] != r.fullWindow()
	return nil
}

// planChanges asks for the changes read outside the window: the runs that
// were running at the last ingest, by key, and (a changes pass) the rows
// changed since the last pass, by mod_time.
func (r *ingestRun) planChanges(ctx context.Context) error {
	var err error
	if cr, ok := r.in.Source.(ChangeReader); ok && cr.ReadsChanges() {
		r.reads = true
		if r.q.Lookup, err = r.in.Ledger.AccrualRuns(ctx, r.in.Cluster); err != nil {
			return err
		}
	}
	prevChanges, tracking, err := r.in.Ledger.Pass(ctx, r.in.Cluster, r.in.Source.Name(), meter.PassChanges)
	if err != nil {
		return err
	}
	r.trackingChanges = tracking
	if r.w.Changes && r.reads && tracking {
		r.q.ChangedSince = prevChanges.AsOf - int64(ChangesMargin/time.Second)
		r.res.ChangesSince = unixUTC(r.q.ChangedSince)
	}
	return nil
}

// written is what the writer did: the ledger's counts, the time it spent
// writing, and its first error.
type written struct {
	st   meter.WriteStats
	busy time.Duration
	err  error
}

// transfer reads the window from the source while a writer beside it
// applies the batches to the ledger, so reading and writing overlap. A
// writer error cancels the reader and is returned as the cause.
func (r *ingestRun) transfer(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.batches = make(chan meter.Batch, 2)
	wdone := make(chan written, 1)
	go r.write(ctx, cancel, wdone)

	r.batchRuns = cmp.Or(r.in.BatchRuns, DefaultBatchRuns)
	r.lookup = make(map[meter.RunKey]bool, len(r.q.Lookup))
	for _, k := range r.q.Lookup {
		r.lookup[k] = false
	}
	r.cur = r.window
	r.cur.Runs = make([]meter.MeasuredRun, 0, min(r.batchRuns, 1024))
	r.changed = meter.Batch{CheckAll: true}
	readStart := time.Now()
	rerr := r.in.Source.Read(ctx, r.q, r.handler(ctx))
	r.res.ReadTime = time.Since(readStart)
	if rerr == nil {
		// The window is done: everything that ended before q.To is written.
		r.cur.Through, r.cur.After = r.q.To, 0
		if err := r.send(ctx, r.cur); err == nil && len(r.changed.Runs) > 0 {
			_ = r.send(ctx, r.changed)
		}
	}
	close(r.batches)
	wr := <-wdone
	r.res.Stats = r.res.Stats.Add(wr.st)
	r.res.WriteTime = wr.busy
	return cmp.Or(wr.err, rerr)
}

// write applies the batches to the ledger, in order, until the reader
// closes the channel; after an error it cancels the reader and drains the
// rest.
func (r *ingestRun) write(ctx context.Context, cancel context.CancelFunc, done chan<- written) {
	var w written
	for b := range r.batches {
		if w.err != nil {
			continue // drain
		}
		t0 := time.Now()
		st, err := r.in.Ledger.ApplyBatch(ctx, r.in.Cluster, r.asOf.Unix(), b)
		w.busy += time.Since(t0)
		if err != nil {
			w.err = err
			cancel()
			continue
		}
		w.st = w.st.Add(st)
		if r.in.Progress != nil && !b.CheckAll {
			r.in.Progress(Progress{From: r.res.From, To: r.res.To, At: unixUTC(max(b.Through, b.ReachedEnd)), Runs: int(r.finished.Load()), Lines: w.st.Lines})
		}
	}
	done <- w
}

// send hands a batch to the writer, unless the ingest is cancelled.
func (r *ingestRun) send(ctx context.Context, b meter.Batch) error {
	select {
	case r.batches <- b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// measure splits a run's usage into lines as of the ingest.
func (r *ingestRun) measure(run meter.Run) meter.MeasuredRun {
	return meter.MeasuredRun{Run: run, Usages: meter.Split(run, r.asOf.Unix(), r.in.Rules)}
}

// mark records that a looked-up run was delivered (running or finished).
func (r *ingestRun) mark(k meter.RunKey) {
	if _, ok := r.lookup[k]; ok {
		r.lookup[k] = true
	}
}

// handler is what the source delivers to: each kind of record to its step.
func (r *ingestRun) handler(ctx context.Context) Handler {
	return Handler{
		Missing:  func(ms []Missing) error { return r.acceptMissing(ctx, ms) },
		Running:  func(runs []meter.Run) error { return r.replaceRunning(ctx, runs) },
		Finished: func(run meter.Run, tie uint64) error { return r.addFinished(ctx, run, tie) },
		Changed:  func(run meter.Run) error { return r.addChanged(ctx, run) },
	}
}

// acceptMissing lets GPU use without job rows through when the accepted
// gap holds all of it (logged and audited, never billed), and refuses the
// ingest with *MissingError otherwise.
func (r *ingestRun) acceptMissing(ctx context.Context, ms []Missing) error {
	var refused []Missing
	for _, m := range ms {
		if !r.in.AcceptMissing.holds(m) {
			refused = append(refused, m)
		}
	}
	if len(refused) > 0 {
		return &MissingError{Missing: refused}
	}
	acc := r.in.AcceptMissing
	r.res.Missing = ms
	for _, m := range ms {
		r.log.Warn("GPU use without job rows, not billed (gap accepted)", "missing", m.String(), "actor", acc.Actor)
	}
	if a, ok := r.in.Ledger.(Auditor); ok {
		gap := map[string]any{"from": acc.From.UTC().Format(time.RFC3339), "to": acc.To.UTC().Format(time.RFC3339),
			"source": r.in.Source.Name(), "missing": ms}
		if err := a.Audit(ctx, r.in.Cluster, time.Now(), acc.Actor, "accept-missing", r.in.Cluster+"/"+r.in.Source.Name(), gap); err != nil {
			return fmt.Errorf("record the accepted gap: %w", err)
		}
	}
	return nil
}

// replaceRunning replaces the accruals with those of the runs still
// running.
func (r *ingestRun) replaceRunning(ctx context.Context, runs []meter.Run) error {
	r.res.Running = len(runs)
	mrs := make([]meter.MeasuredRun, 0, len(runs))
	for _, run := range runs {
		r.mark(run.Key)
		if mr := r.measure(run); len(mr.Usages) > 0 {
			mrs = append(mrs, mr)
		}
	}
	st, err := r.in.Ledger.ReplaceAccruals(ctx, r.in.Cluster, r.asOf.Unix(), mrs)
	r.res.Stats = r.res.Stats.Add(st)
	return err
}

// addFinished adds a finished run of the window to the current batch, and
// hands the batch over when it is full.
func (r *ingestRun) addFinished(ctx context.Context, run meter.Run, tie uint64) error {
	r.res.Finished++
	r.finished.Add(1)
	r.mark(run.Key)
	r.lastEnd, r.lastTie, r.maxEnd = run.End, tie, max(r.maxEnd, run.End)
	// A run without usage is still handed over: the ledger may hold lines
	// for it that must now be reversed (it decides whether a lookup is
	// needed).
	mr := r.measure(run)
	if len(mr.Usages) > 0 {
		r.res.GPURuns++
	} else if r.fresh.Contains(run.End) && !run.CrossedPeriodEnd(r.asOf.Unix()) {
		return nil // no usage, and no ingest can have written lines for it
	}
	r.cur.Runs = append(r.cur.Runs, mr)
	if len(r.cur.Runs) < r.batchRuns {
		return nil
	}
	return r.sendFull(ctx)
}

// sendFull hands over a full batch of the window and starts the next. An
// ordered source's batch covers what has ended so far; an unordered one's
// covers nothing until the window is complete (its Touch marks the window
// as possibly holding lines).
func (r *ingestRun) sendFull(ctx context.Context) error {
	if !r.unordered {
		r.cur.Through, r.cur.After, r.cur.CoveredTo = r.lastEnd, r.lastTie, r.lastEnd+1
	}
	r.cur.ReachedEnd = r.maxEnd
	if err := r.send(ctx, r.cur); err != nil {
		return err
	}
	next := r.window
	if !r.unordered {
		next.Through, next.After = r.lastEnd, r.lastTie
	}
	next.Runs = make([]meter.MeasuredRun, 0, r.batchRuns)
	r.cur = next
	return nil
}

// addChanged adds a run read outside the window to the batch of changed
// runs, and hands that batch over when it is full.
func (r *ingestRun) addChanged(ctx context.Context, run meter.Run) error {
	r.res.Changed++
	r.mark(run.Key)
	r.changed.Runs = append(r.changed.Runs, r.measure(run))
	if len(r.changed.Runs) < r.batchRuns {
		return nil
	}
	err := r.send(ctx, r.changed)
	r.changed = meter.Batch{CheckAll: true}
	return err
}

// reportGone lists, in Result.Gone and the log, the runs that were
// running at the last ingest and that the source delivered neither as
// running nor as finished.
func (r *ingestRun) reportGone() {
	for k, seen := range r.lookup {
		if !seen {
			r.res.Gone = append(r.res.Gone, k)
		}
	}
	slices.SortFunc(r.res.Gone, meter.RunKey.Compare)
	for _, k := range r.res.Gone {
		r.log.Warn("a run that was running at the last ingest is neither running nor finished in the job table now (row deleted, or pending again); its lines stay as they are", "run", k.String())
	}
}

// recordPasses records a changes pass (or, the first ingest, starts
// tracking changes from its snapshot on) and a verification.
func (r *ingestRun) recordPasses(ctx context.Context) error {
	res := &r.res
	pass := meter.Pass{Source: r.in.Source.Name(), Finished: r.in.now().Unix(), Runs: res.Finished + res.Changed, Lines: res.Stats.Lines, Corrections: res.Stats.Corrections}
	if r.reads && (r.q.ChangedSince != 0 || !r.trackingChanges) {
		p := pass
		p.Kind, p.AsOf, p.From = meter.PassChanges, r.srcNow.Unix(), cmp.Or(r.q.ChangedSince, r.srcNow.Unix())
		if err := r.in.Ledger.RecordPass(ctx, r.in.Cluster, p); err != nil {
			return err
		}
	}
	if r.w.Verify {
		p := pass
		p.Kind, p.AsOf, p.From = meter.PassVerify, r.asOf.Unix(), r.q.From
		if err := r.in.Ledger.RecordPass(ctx, r.in.Cluster, p); err != nil {
			return err
		}
		res.Verified = true
	}
	return nil
}
