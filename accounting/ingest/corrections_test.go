package ingest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
)

// TestRunCorrectedToZeroIsReversed: runs whose records Slurm corrected to
// no usage (a runaway job fixed with sacctmgr: end = start; a record that
// lost its GPUs; one that lost its start) get lines that bring each of
// their keys to zero when the window is read again, a closed period's
// lines staying as they are and its difference landing in the open period
// as an adjustment tagged with its own period. (On the old ingester such a
// run never reached the ledger and kept its GPU-seconds.)
func TestRunCorrectedToZeroIsReversed(t *testing.T) {
	ctx := context.Background()
	asOf := ts("2026-12-20 00:00:00")
	h100 := []meter.Alloc{{Type: "h100", Count: 2}}
	mk := func(id uint32, start, end string) row {
		r := meter.Run{Key: meter.RunKey{Cluster: "c", JobID: id, Submit: ts(start) - 60}, Account: "acme", User: "u", Partition: "pool",
			Start: ts(start), End: ts(end), GPUs: h100}
		return row{run: r, inx: uint64(id), eligible: r.Key.Submit}
	}
	rows := []row{
		mk(1, "2026-11-10 00:00:00", "2026-11-10 05:00:00"),
		mk(2, "2026-11-30 22:00:00", "2026-12-01 02:00:00"),
		mk(3, "2026-12-05 00:00:00", "2026-12-05 03:00:00"),
		mk(4, "2026-12-06 00:00:00", "2026-12-06 03:00:00"), // unchanged
	}
	l := ledger.NewMemory()
	src := &tableSource{rows: rows}
	if _, err := newIngester(src, l, asOf).Ingest(ctx, window); err != nil {
		t.Fatal(err)
	}
	if err := l.MarkClosed(ctx, ledger.PeriodRecord{Cluster: "c", Period: meter.PeriodOfUnix(ts("2026-11-01 00:00:00")), ClosedAt: time.Unix(asOf, 0), ClosedBy: "t"}); err != nil {
		t.Fatal(err)
	}
	nov := allLines(t, l, meter.PeriodOfUnix(ts("2026-11-01 00:00:00")))
	rows[0].run.End = rows[0].run.Start // runaway fixed: zero length
	rows[1].run.GPUs = nil              // lost its GPUs
	rows[2].run.Start = 0               // lost its start
	res, err := newIngester(src, l, asOf).Ingest(ctx, window)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.Corrections != 4 || res.Stats.Adjustments != 2 {
		t.Errorf("stats %+v, want 4 corrections (runs 1 and 3 one key each, run 2 two), 2 of them adjustments in December", res.Stats)
	}
	if d := gocmp.Diff(reference(rows, asOf), fromLedger(t, l)); d != "" {
		t.Errorf("ledger vs reference (-want +got)\n%s", d)
	}
	if d := gocmp.Diff(nov, allLines(t, l, meter.PeriodOfUnix(ts("2026-11-01 00:00:00")))); d != "" {
		t.Errorf("closed November changed (-want +got)\n%s", d)
	}
	for _, ln := range allLines(t, l, meter.PeriodOfUnix(ts("2026-12-01 00:00:00"))) {
		if ln.Revision > 0 && ln.Run.JobID <= 2 && ln.Period.String() == "2026-11" && ln.Kind() != meter.KindAdjustment {
			t.Errorf("reversal of November %+v is not an adjustment", ln)
		}
	}
}

// TestScheduledCorrectionsConverge changes records the way Slurm does,
// each found by its own mechanism of the daemon's scheduled ingest, with
// no from= anywhere after the first ingest:
//   - runs that were running at the last ingest: a runaway job fixed with
//     sacctmgr (end = start, mod_time untouched) and a late end record
//     (slurmdbd was down: the end is days old, mod_time new), both found
//     by key in the next incremental ingest;
//   - rows changed with a new mod_time and ended long before the window
//     (a record losing its GPUs in a closed period, one losing its start):
//     found by the changes pass;
//   - a row changed without a new mod_time in an open period, older than
//     the lookback: found by the verification.
//
// After each step only what the mechanisms so far can find is corrected;
// at the end the ledger equals the independent reference and the closed
// period's lines are unchanged.
func TestScheduledCorrectionsConverge(t *testing.T) {
	ctx := context.Background()
	asOf := ts("2026-12-10 00:00:00")
	rows := randomRows(11, 2500, asOf)
	l := ledger.NewMemory()
	src := &tableSource{rows: rows}
	now := asOf
	in := newIngester(src, l, asOf)
	in.Clock = func() time.Time { return time.Unix(now, 0) }
	if _, err := in.Ingest(ctx, window); err != nil {
		t.Fatal(err)
	}
	nov := meter.PeriodOfUnix(ts("2026-11-01 00:00:00"))
	oct := nov - 1
	for _, p := range []meter.Period{oct, nov} {
		if err := l.MarkClosed(ctx, ledger.PeriodRecord{Cluster: "c", Period: p, ClosedAt: time.Unix(asOf, 0), ClosedBy: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	closedLines := map[meter.Period][]meter.Line{oct: allLines(t, l, oct), nov: allLines(t, l, nov)}

	// Pick the rows to change.
	pick := func(ok func(r row) bool) int {
		for i, r := range rows {
			if r.mod == 0 || !ok(r) {
				continue
			}
			rows[i].mod = 0 // taken
			return i
		}
		t.Fatal("no row to change")
		return 0
	}
	gpu := func(r row) bool { return len(r.run.GPUs) > 0 }
	crossed := func(r row) bool { return r.run.Start < ts("2026-11-25 00:00:00") } // has final lines in a closed period
	runaway := pick(func(r row) bool { return r.run.End == 0 && gpu(r) && crossed(r) })
	late := pick(func(r row) bool { return r.run.End == 0 && gpu(r) && r.run.Start < ts("2026-12-03 00:00:00") })
	lostGPUs := pick(func(r row) bool { return gpu(r) && r.run.End > 0 && meter.PeriodOfUnix(r.run.End) == nov })
	lostStart := pick(func(r row) bool { return gpu(r) && r.run.End > 0 && meter.PeriodOfUnix(r.run.End) == oct })
	silent := pick(func(r row) bool {
		return gpu(r) && r.run.End > ts("2026-12-02 00:00:00") && r.run.End < ts("2026-12-08 00:00:00") && r.run.End-r.run.Start > 7200
	})
	for _, i := range []int{runaway, late, lostGPUs, lostStart, silent} {
		rows[i].mod = max(rows[i].run.Key.Submit, rows[i].run.Start, rows[i].run.End)
	}
	want := func() map[refKey]int64 { return reference(rows, now) }
	ledgerNow := func() map[refKey]int64 { return fromLedger(t, l) }
	step := func(name string, wantDiff bool) {
		t.Helper()
		in.Clock = func() time.Time { return time.Unix(now, 0) }
		res, err := in.Scheduled(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d := gocmp.Diff(want(), ledgerNow())
		if wantDiff != (d != "") {
			t.Fatalf("%s (changed %d, verified %v): ledger differs from the reference: %v, want %v\n%s", name, res.Changed, res.Verified, d != "", wantDiff, d)
		}
		for p, before := range closedLines {
			if d := gocmp.Diff(before, allLines(t, l, p)); d != "" {
				t.Fatalf("%s: closed %s changed (-before +after)\n%s", name, p, d)
			}
		}
	}

	// Three days later.
	now = asOf + 3*86400
	rows[runaway].run.End = rows[runaway].run.Start // mod_time untouched
	rows[late].run.End = rows[late].run.Start + 3600
	rows[late].mod = now
	rows[lostGPUs].run.GPUs, rows[lostGPUs].mod = nil, now
	rows[lostStart].run.Start, rows[lostStart].mod = 0, now
	rows[silent].run.End -= 3600 // mod_time untouched
	in.ChangesEvery, in.VerifyEvery = -1, -1
	step("incremental: runs that were running, found by key", true)
	for _, i := range []int{runaway, late} {
		r := rows[i].run
		if got, w := sumRun(t, l, r.Key), sumRef(rows[i:i+1], now); got != w {
			t.Errorf("run %s (%d) holds %d GPU-seconds, want %d", r.Key, i, got, w)
		}
	}
	in.ChangesEvery = time.Hour
	now += 60
	step("changes pass: rows with a new mod_time", true)
	in.VerifyEvery = 24 * time.Hour
	now += 60
	step("verification of the open periods", false)
	// Nothing more to do, whatever runs.
	now += 2 * 86400
	res, err := in.Scheduled(ctx)
	if err != nil || res.Stats.Lines != 0 {
		t.Fatalf("next scheduled ingest: %d lines, %v", res.Stats.Lines, err)
	}
	if d := gocmp.Diff(want(), ledgerNow()); d != "" {
		t.Fatalf("(-want +got)\n%s", d)
	}
}

func sumRun(t *testing.T, l *ledger.Memory, k meter.RunKey) int64 {
	t.Helper()
	var n int64
	for p := meter.PeriodOfUnix(ts("2026-09-01 00:00:00")); p <= meter.PeriodOfUnix(ts("2027-01-01 00:00:00")); p++ {
		for _, ln := range allLines(t, l, p) {
			if ln.Run == k {
				n += ln.GPUSeconds
			}
		}
		_ = l.Accruals(context.Background(), "c", ledger.LineQuery{Booked: p}, func(ln meter.Line) error {
			if ln.Run == k {
				n += ln.GPUSeconds
			}
			return nil
		})
	}
	return n
}

func sumRef(rows []row, asOf int64) int64 {
	var n int64
	for _, v := range reference(slices.Clone(rows), asOf) {
		n += v
	}
	return n
}

// changeSource records its queries and reads changes (an empty table).
type changeSource struct{ queries *[]Query }

func (s *changeSource) Name() string       { return "slurmdb" }
func (s *changeSource) ReadsChanges() bool { return true }
func (s *changeSource) Unordered()         {}
func (s *changeSource) Read(_ context.Context, q Query, h Handler) error {
	*s.queries = append(*s.queries, q)
	return h.Running(nil)
}

// TestScheduledWindows: what the daemon's ingest job asks the source for,
// run after run.
func TestScheduledWindows(t *testing.T) {
	ctx := context.Background()
	t0 := ts("2026-12-20 12:00:00")
	var got []Query
	l := ledger.NewMemory()
	now := t0
	in := newIngester(&changeSource{queries: &got}, l, t0)
	in.Clock = func() time.Time { return time.Unix(now, 0) }
	step := func(at int64) Result {
		t.Helper()
		now = at
		res, err := in.Scheduled(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	step(t0)            // the first ingest
	r := step(t0 + 300) // a verification is due (none yet); changes were tracked from t0
	step(t0 + 600)      // nothing due
	step(t0 + 3900)     // a changes pass is due
	nov := ts("2026-11-01 00:00:00")
	margin := int64(ChangesMargin / time.Second)
	want := []Query{
		{From: nov, To: t0, CheckFrom: nov},
		{From: nov, To: t0 + 300, CheckFrom: t0, AllRows: true},
		{From: t0 + 300 - 86400, To: t0 + 600, CheckFrom: t0 + 300, AllRows: true},
		{From: t0 + 600 - 86400, To: t0 + 3900, CheckFrom: t0 + 600, AllRows: true, ChangedSince: t0 - margin},
	}
	if d := gocmp.Diff(want, got); d != "" {
		t.Errorf("queries (-want +got)\n%s", d)
	}
	if !r.Verified || !strings.Contains(r.Start, "first open period") {
		t.Errorf("second run: %+v, want a verification", r)
	}
	// November closed: the verification starts in December.
	if err := l.MarkClosed(ctx, ledger.PeriodRecord{Cluster: "c", Period: meter.PeriodOfUnix(nov), ClosedBy: "t"}); err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	step(t0 + 2*86400)
	if want := ts("2026-12-01 00:00:00"); len(got) != 1 || got[0].From != want {
		t.Errorf("verification after November's close: %+v, want From %d", got, want)
	}
}
