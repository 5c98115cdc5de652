package ledgertest

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/internal/interval"
	"github.com/gpubridge/gpubridge/internal/money"
)

// Store is every method of the ledger, as DB and Memory offer them: what
// the suite exercises. Production code uses the small interfaces of its
// use (ingest.Ledger, ledger.CloseStore, ...).
type Store interface {
	ledger.CloseStore
	ApplyBatch(ctx context.Context, cluster string, asOf int64, b meter.Batch) (meter.WriteStats, error)
	ReplaceAccruals(ctx context.Context, cluster string, asOf int64, runs []meter.MeasuredRun) (meter.WriteStats, error)
	Watermark(ctx context.Context, cluster, source string) (meter.Watermark, bool, error)
	Accruals(ctx context.Context, cluster string, q ledger.LineQuery, fn func(meter.Line) error) error
	AccrualRuns(ctx context.Context, cluster string) ([]meter.RunKey, error)
	Pass(ctx context.Context, cluster, source, kind string) (meter.Pass, bool, error)
	RecordPass(ctx context.Context, cluster string, p meter.Pass) error
	Touched(ctx context.Context, cluster string) (interval.Set, error)
	CreditStore
}

var (
	_ Store = (*ledger.DB)(nil)
	_ Store = (*ledger.Memory)(nil)
)

// Rules is the tier mapping the suite measures with.
var Rules = meter.TierRules{OnDemandPartition: "ondemand", OnDemandQOS: "ondemand"}

// TS parses "2006-01-02 15:04:05" (UTC) into Unix seconds.
func TS(s string) int64 {
	t, err := time.Parse(time.DateTime, s)
	if err != nil {
		panic(err)
	}
	return t.Unix()
}

// P parses "YYYY-MM".
func P(s string) meter.Period {
	p, err := meter.ParsePeriod(s)
	if err != nil {
		panic(err)
	}
	return p
}

// Measure splits runs as of asOf.
func Measure(asOf int64, runs ...meter.Run) []meter.MeasuredRun {
	out := make([]meter.MeasuredRun, len(runs))
	for i, r := range runs {
		out[i] = meter.MeasuredRun{Run: r, Usages: meter.Split(r, asOf, Rules)}
	}
	return out
}

// Card is a rate card with h100 and its 1g.10gb profile.
func Card(t testing.TB) pricing.Card {
	c, err := pricing.ParseYAML([]byte(`
version: 1
currency: EUR
types:
  - {name: 1g.10gb, parent: h100}
rates:
  - {type: h100, tier: reserved, perGPUHour: "2.10", from: 2020-01-01}
  - {type: h100, tier: ondemand, perGPUHour: "3.50", from: 2020-01-01}
`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Sums returns GPU-seconds per (booked period, usage period, tier, type,
// kind) of the lines booked in the given periods.
type SumKey struct {
	Booked, Usage meter.Period
	Account       string
	Tier          meter.Tier
	Type          string
	Kind          meter.Kind
}

// Sums reads the lines booked in periods and sums them by SumKey.
func Sums(t testing.TB, s Store, cluster string, periods ...meter.Period) map[SumKey]int64 {
	t.Helper()
	out := map[SumKey]int64{}
	for _, p := range periods {
		err := s.Lines(context.Background(), cluster, ledger.LineQuery{Booked: p}, func(l meter.Line) error {
			out[SumKey{l.Booked, l.Period, l.Account, l.Tier, l.Type, l.Kind()}] += l.GPUSeconds
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}

// AllLines reads the ordered lines booked in p.
func AllLines(t testing.TB, s Store, cluster string, p meter.Period) []meter.Line {
	t.Helper()
	var out []meter.Line
	if err := s.Lines(context.Background(), cluster, ledger.LineQuery{Booked: p, Ordered: true}, func(l meter.Line) error {
		out = append(out, l)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

var nonWord = regexp.MustCompile(`[^A-Za-z0-9]+`)

// cluster names a subtest's own cluster, so subtests can share one database.
func cluster(t *testing.T) string {
	n := strings.ToLower(nonWord.ReplaceAllString(t.Name(), ""))
	if len(n) > 60 {
		n = n[len(n)-60:]
	}
	return n
}

func run(c string, id uint32, submit int64, acct, part string, start, end int64, gpus ...meter.Alloc) meter.Run {
	return meter.Run{Key: meter.RunKey{Cluster: c, JobID: id, Submit: submit}, Account: acct, User: "alice",
		Partition: part, QOS: acct, Start: start, End: end, GPUs: gpus}
}

func batch(src string, from, through int64, mrs []meter.MeasuredRun) meter.Batch {
	return meter.Batch{Source: src, Runs: mrs, From: from, Through: through}
}

// Run runs the suite. newStore returns a store for one subtest; the suite
// gives every subtest its own cluster name, so the store may be shared.
func Run(t *testing.T, newStore func(t *testing.T) Store) {
	runCredits(t, newStore)
	for _, st := range suite {
		t.Run(st.name, func(t *testing.T) { st.run(t, newStore) })
	}
}

// The suite's fixtures: the periods it books into, the time it measures
// running runs to, and the allocation of one MIG profile.
var (
	nov, dec, jan = P("2026-11"), P("2026-12"), P("2027-01")
	asOf          = TS("2026-12-15 00:00:00")
	mig           = meter.Alloc{Type: "1g.10gb", Count: 1}
)

// h100 is an allocation of n whole h100 GPUs.
func h100(n int64) meter.Alloc { return meter.Alloc{Type: "h100", Count: n} }

// suite is the suite's subtests, in order; each gets its own cluster.
var suite = []struct {
	name string
	run  func(t *testing.T, newStore func(t *testing.T) Store)
}{
	{"re-ingest adds nothing", reingestAddsNothing},
	{"duplicate outside the coverage is detected", duplicateOutsideCoverage},
	{"changed record becomes a correction revision", changedRecordCorrected},
	{"running run accrues, then continues, never twice", runningRunAccrues},
	{"watermark advances, never back, not across a gap", watermarkAdvances},
	{"close rules and adjustments", closeRulesAndAdjustments},
	{"lines are ordered and filtered", linesOrderedAndFiltered},
	{"a run whose usage became zero is reversed, closed periods untouched", zeroUsageReversed},
	{"a check-all batch compares runs outside the coverage and moves nothing", checkAllBatch},
	{"many runs: bulk comparison finds every key", bulkComparison},
	{"an unordered window killed half-way is touched, not covered", unorderedWindowKilled},
	{"passes and the runs of the accruals", passesAndAccrualRuns},
	{"lock", ledgerLock},
}

// reingestAddsNothing checks that ingesting the same runs again adds no line.
func reingestAddsNothing(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := context.Background()
	s, c := newStore(t), cluster(t)
	runs := Measure(asOf,
		run(c, 1, TS("2026-11-01 00:00:00"), "acme", "pool", TS("2026-11-02 10:00:00"), TS("2026-11-02 11:00:00"), h100(2)),
		run(c, 2, TS("2026-11-01 00:00:00"), "acme", "ondemand", TS("2026-11-30 23:00:00"), TS("2026-12-01 01:00:00"), h100(1), mig),
		run(c, 3, TS("2026-11-01 00:00:00"), "beta", "pool", 0, TS("2026-11-03 00:00:00"), h100(1)),
	)
	st, err := s.ApplyBatch(ctx, c, asOf, batch("slurmdb", TS("2026-11-01 00:00:00"), TS("2026-12-02 00:00:00"), runs))
	if err != nil {
		t.Fatal(err)
	}
	if st.Lines != 5 {
		t.Errorf("first ingest wrote %d lines, want 5", st.Lines)
	}
	want := map[SumKey]int64{
		{nov, nov, "acme", meter.Reserved, "h100", meter.KindUsage}:    7200,
		{nov, nov, "acme", meter.OnDemand, "h100", meter.KindUsage}:    3600,
		{nov, nov, "acme", meter.OnDemand, "1g.10gb", meter.KindUsage}: 3600,
		{dec, dec, "acme", meter.OnDemand, "h100", meter.KindUsage}:    3600,
		{dec, dec, "acme", meter.OnDemand, "1g.10gb", meter.KindUsage}: 3600,
	}
	if d := cmp.Diff(want, Sums(t, s, c, nov, dec)); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	for range 2 {
		st, err = s.ApplyBatch(ctx, c, asOf, batch("slurmdb", TS("2026-11-01 00:00:00"), TS("2026-12-02 00:00:00"), runs))
		if err != nil {
			t.Fatal(err)
		}
		if st.Lines != 0 {
			t.Errorf("re-ingest wrote %d lines, want 0", st.Lines)
		}
	}
	if d := cmp.Diff(want, Sums(t, s, c, nov, dec)); d != "" {
		t.Errorf("after re-ingest (-want +got)\n%s", d)
	}
}

// duplicateOutsideCoverage checks that a run written again outside the covered range is detected, not duplicated.
func duplicateOutsideCoverage(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := context.Background()
	s, c := newStore(t), cluster(t)
	runs := Measure(asOf, run(c, 1, 1, "acme", "pool", TS("2026-11-02 10:00:00"), TS("2026-11-02 11:00:00"), h100(2)))
	// No coverage recorded (From == Through): the second write cannot
	// know the run was written and must still add nothing.
	for i := range 2 {
		st, err := s.ApplyBatch(ctx, c, asOf, batch("", 0, 0, runs))
		if err != nil {
			t.Fatal(err)
		}
		if want := []int{1, 0}[i]; st.Lines != want {
			t.Errorf("write %d: %d lines, want %d", i, st.Lines, want)
		}
	}
}

// changedRecordCorrected checks that a run whose record changed gets a correction revision.
func changedRecordCorrected(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := context.Background()
	s, c := newStore(t), cluster(t)
	r := run(c, 7, 1, "acme", "pool", TS("2026-11-02 10:00:00"), TS("2026-11-02 11:00:00"), h100(2))
	win := func(r meter.Run) meter.Batch {
		return batch("slurmdb", TS("2026-11-01 00:00:00"), TS("2026-12-01 00:00:00"), Measure(asOf, r))
	}
	if _, err := s.ApplyBatch(ctx, c, asOf, win(r)); err != nil {
		t.Fatal(err)
	}
	r.End = TS("2026-11-02 10:30:00")
	st, err := s.ApplyBatch(ctx, c, asOf, win(r))
	if err != nil {
		t.Fatal(err)
	}
	if st.Corrections != 1 || st.Lines != 1 {
		t.Errorf("stats %+v, want one correction", st)
	}
	lines := AllLines(t, s, c, nov)
	got := []int64{}
	for _, l := range lines {
		got = append(got, int64(l.Revision), l.GPUSeconds)
	}
	if d := cmp.Diff([]int64{0, 7200, 1, -3600}, got); d != "" {
		t.Errorf("revisions (-want +got)\n%s", d)
	}
	// The tier changed: the old key is reversed, the new one added.
	r.Partition = "ondemand"
	if _, err := s.ApplyBatch(ctx, c, asOf, win(r)); err != nil {
		t.Fatal(err)
	}
	want := map[SumKey]int64{{nov, nov, "acme", meter.OnDemand, "h100", meter.KindUsage}: 3600}
	if d := cmp.Diff(want, Sums(t, s, c, nov)); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

// runningRunAccrues checks that a running run accrues, continues when it ends, and is never counted twice.
func runningRunAccrues(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := context.Background()
	s, c := newStore(t), cluster(t)
	r := run(c, 9, 1, "acme", "pool", TS("2026-11-20 00:00:00"), 0, h100(1))
	// Ingest on Nov 25: all of it is an accrual.
	if _, err := s.ReplaceAccruals(ctx, c, TS("2026-11-25 00:00:00"), Measure(TS("2026-11-25 00:00:00"), r)); err != nil {
		t.Fatal(err)
	}
	if got := Sums(t, s, c, nov); len(got) != 0 {
		t.Errorf("ledger lines for a running run before period end: %v", got)
	}
	acc := accruals(t, s, c, nov)
	if acc != 5*86400 {
		t.Errorf("accrual %d, want %d", acc, 5*86400)
	}
	// Ingest on Dec 2 (twice): November is final, December accrues.
	for range 2 {
		if _, err := s.ReplaceAccruals(ctx, c, TS("2026-12-02 00:00:00"), Measure(TS("2026-12-02 00:00:00"), r)); err != nil {
			t.Fatal(err)
		}
	}
	want := map[SumKey]int64{{nov, nov, "acme", meter.Reserved, "h100", meter.KindUsage}: 11 * 86400}
	if d := cmp.Diff(want, Sums(t, s, c, nov, dec)); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	if got := accruals(t, s, c, nov); got != 0 {
		t.Errorf("november accrual %d after its end, want 0", got)
	}
	if got := accruals(t, s, c, dec); got != 86400 {
		t.Errorf("december accrual %d, want 86400", got)
	}
	// The run ends on Dec 5; the next snapshot has no running runs.
	r.End = TS("2026-12-05 00:00:00")
	if _, err := s.ReplaceAccruals(ctx, c, asOf, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApplyBatch(ctx, c, asOf, batch("slurmdb", TS("2026-12-01 00:00:00"), asOf, Measure(asOf, r))); err != nil {
		t.Fatal(err)
	}
	want[SumKey{dec, dec, "acme", meter.Reserved, "h100", meter.KindUsage}] = 4 * 86400
	if d := cmp.Diff(want, Sums(t, s, c, nov, dec)); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	if got := accruals(t, s, c, dec); got != 0 {
		t.Errorf("accrual %d left after the run ended", got)
	}
}

// watermarkAdvances checks that the watermark advances, never moves back, and never crosses a gap.
func watermarkAdvances(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := context.Background()
	s, c := newStore(t), cluster(t)
	apply := func(from, through int64, after uint64) {
		t.Helper()
		b := batch("slurmdb", from, through, nil)
		b.After = after
		if _, err := s.ApplyBatch(ctx, c, asOf, b); err != nil {
			t.Fatal(err)
		}
	}
	wm := func() meter.Watermark {
		st, err := s.State(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return st.Watermarks["slurmdb"]
	}
	apply(100, 200, 5)
	apply(150, 180, 0) // overlap behind the watermark
	if got := wm(); got.Through != 200 || got.After != 5 {
		t.Errorf("watermark %+v, want 200/5", got)
	}
	apply(200, 200, 9)
	apply(250, 400, 0) // gap: [200, 250) never read
	if got := wm(); got.Through != 200 || got.After != 9 {
		t.Errorf("watermark %+v, want 200/9", got)
	}
	st, err := s.State(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([][2]int64{{100, 200}, {250, 400}}, st.Coverage); d != "" {
		t.Errorf("coverage (-want +got)\n%s", d)
	}
}

// closeRulesAndAdjustments checks the rules of a close and the adjustments booked after one.
func closeRulesAndAdjustments(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := context.Background()
	s, c := newStore(t), cluster(t)
	card := Card(t)
	req := ledger.CloseRequest{Cluster: c, Period: nov, Now: TSTime("2026-12-02 03:00:00"), Actor: "test", Card: card,
		Tenants: ledger.Labels{"acme": "acme"}, LockWait: time.Second}
	r1 := run(c, 1, 1, "acme", "pool", TS("2026-11-02 10:00:00"), TS("2026-11-02 11:00:00"), h100(1), mig)
	r2 := run(c, 2, 1, "nobody", "pool", TS("2026-11-03 10:00:00"), TS("2026-11-03 10:30:00"), meter.Alloc{Type: "gpu", Count: 1})
	if _, err := ledger.Close(ctx, s, req); !errors.Is(err, ledger.ErrNotIngested) {
		t.Errorf("close before ingest: %v, want ErrNotIngested", err)
	}
	early := req
	early.Now = TSTime("2026-11-30 23:59:59")
	if _, err := ledger.Close(ctx, s, early); !errors.Is(err, ledger.ErrNotEnded) {
		t.Errorf("close before the end: %v, want ErrNotEnded", err)
	}
	now := TS("2026-12-02 03:00:00")
	if _, err := s.ReplaceAccruals(ctx, c, now, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApplyBatch(ctx, c, now, batch("slurmdb", TS("2026-11-01 00:00:00"), now, Measure(now, r1, r2))); err != nil {
		t.Fatal(err)
	}
	_, err := ledger.Close(ctx, s, req)
	var mre *pricing.MissingRatesError
	if !errors.As(err, &mre) || len(mre.Items) != 1 || mre.Items[0].Type != "gpu" || mre.Items[0].GPUSeconds != 1800 {
		t.Fatalf("close with an unpriced type: %v, want a MissingRatesError for gpu", err)
	}
	if _, ok, _ := s.Period(ctx, c, nov); ok {
		t.Fatal("a failed close must leave the period open")
	}
	p, _ := pricing.ParsePrice("1.00")
	req.Card, err = card.WithRate(pricing.Rate{Type: "gpu", PerGPUHour: p, From: mustDate("2020-01-01")})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ledger.Close(ctx, s, req)
	if err != nil {
		t.Fatal(err)
	}
	// 3600 s h100 at 2.10 + 3600 s 1g.10gb at 2.10/7 + 1800 s gpu at 1.00
	if rec.Amount != money.New(210+30+50, money.Currency{Code: "EUR", Minor: 2}) || rec.Lines != 3 || rec.GPUSeconds != 9000 {
		t.Errorf("closed record %+v", rec)
	}
	if d := cmp.Diff(map[string]string{"acme": "acme"}, rec.Snapshot.Tenants); d != "" {
		t.Errorf("tenants snapshot (-want +got)\n%s", d)
	}
	got, ok, err := s.Period(ctx, c, nov)
	if err != nil || !ok || got.Amount != rec.Amount || got.Snapshot.Card.Currency != "EUR" {
		t.Errorf("stored record %+v, %v, %v", got, ok, err)
	}
	if _, err := ledger.Close(ctx, s, req); !errors.Is(err, ledger.ErrAlreadyClosed) {
		t.Errorf("second close: %v, want ErrAlreadyClosed", err)
	}
	before := AllLines(t, s, c, nov)
	// A late record for November and a correction of r1 arrive.
	late := run(c, 3, 1, "acme", "pool", TS("2026-11-10 00:00:00"), TS("2026-11-10 00:10:00"), h100(1))
	r1.End = TS("2026-11-02 10:30:00")
	if _, err := s.ApplyBatch(ctx, c, now, batch("slurmdb", TS("2026-11-01 00:00:00"), now, Measure(now, late, r1))); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(before, AllLines(t, s, c, nov)); d != "" {
		t.Errorf("closed period changed (-want +got)\n%s", d)
	}
	want := map[SumKey]int64{
		{dec, nov, "acme", meter.Reserved, "h100", meter.KindAdjustment}:    600 - 1800,
		{dec, nov, "acme", meter.Reserved, "1g.10gb", meter.KindAdjustment}: -1800,
	}
	if d := cmp.Diff(want, Sums(t, s, c, dec)); d != "" {
		t.Errorf("adjustments (-want +got)\n%s", d)
	}
	// December and January closed: a November record lands in February? No:
	// in the first open period after November.
	for _, p := range []meter.Period{dec} {
		if err := s.MarkClosed(ctx, ledger.PeriodRecord{Cluster: c, Period: p, ClosedAt: TSTime("2027-01-02 00:00:00"), ClosedBy: "test", Currency: "EUR"}); err != nil {
			t.Fatal(err)
		}
	}
	later := run(c, 4, 1, "acme", "pool", TS("2026-11-11 00:00:00"), TS("2026-11-11 00:00:10"), h100(1))
	if _, err := s.ApplyBatch(ctx, c, now, batch("slurmdb", 0, 0, Measure(now, later))); err != nil {
		t.Fatal(err)
	}
	want = map[SumKey]int64{{jan, nov, "acme", meter.Reserved, "h100", meter.KindAdjustment}: 10}
	if d := cmp.Diff(want, Sums(t, s, c, jan)); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

// linesOrderedAndFiltered checks that Lines orders and filters the lines it reads.
func linesOrderedAndFiltered(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := context.Background()
	s, c := newStore(t), cluster(t)
	runs := Measure(asOf,
		run(c, 5, 1, "zeta", "pool", TS("2026-11-02 10:00:00"), TS("2026-11-02 11:00:00"), h100(1)),
		run(c, 3, 2, "acme", "pool", TS("2026-11-02 10:00:00"), TS("2026-11-02 11:00:00"), h100(1), mig),
		run(c, 3, 1, "acme", "pool", TS("2026-11-02 10:00:00"), TS("2026-11-02 11:00:00"), h100(1)),
	)
	if _, err := s.ApplyBatch(ctx, c, asOf, batch("slurmdb", 0, 0, runs)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range AllLines(t, s, c, nov) {
		got = append(got, l.Account+"/"+l.Run.String()+"/"+l.Type)
	}
	want := []string{"acme/" + c + "/3@1/h100", "acme/" + c + "/3@2/1g.10gb", "acme/" + c + "/3@2/h100", "zeta/" + c + "/5@1/h100"} // job order
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	n := 0
	if err := s.Lines(ctx, c, ledger.LineQuery{Booked: nov, Account: "zeta"}, func(meter.Line) error { n++; return nil }); err != nil || n != 1 {
		t.Errorf("account filter: %d lines, %v", n, err)
	}
	want0 := AllLines(t, s, c, nov)[0]
	wantLine := meter.Line{Usage: meter.Usage{Run: meter.RunKey{Cluster: c, JobID: 3, Submit: 1}, Period: nov, Tier: meter.Reserved, Type: "h100", Count: 1,
		Start: TS("2026-11-02 10:00:00"), End: TS("2026-11-02 11:00:00"), GPUSeconds: 3600, Final: true}, Account: "acme", User: "alice", Booked: nov}
	if d := cmp.Diff(wantLine, want0); d != "" {
		t.Errorf("line round trip (-want +got)\n%s", d)
	}
}

// zeroUsageReversed checks that a run whose usage became zero is reversed, and closed periods stay untouched.
func zeroUsageReversed(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := context.Background()
	s, c := newStore(t), cluster(t)
	now := TS("2026-12-02 03:00:00")
	// Five finished runs, each across the November/December boundary
	// or inside November, each with a full GPU and a MIG slice.
	runs := []meter.Run{
		run(c, 1, 1, "acme", "pool", TS("2026-11-30 20:00:00"), TS("2026-12-01 02:00:00"), h100(2), mig),
		run(c, 2, 1, "acme", "pool", TS("2026-11-10 00:00:00"), TS("2026-11-10 05:00:00"), h100(1)),
		run(c, 3, 1, "acme", "pool", TS("2026-11-11 00:00:00"), TS("2026-11-11 05:00:00"), h100(1)),
		run(c, 4, 1, "acme", "pool", TS("2026-11-12 00:00:00"), TS("2026-11-12 05:00:00"), h100(4)),
		run(c, 5, 1, "acme", "pool", TS("2026-11-13 00:00:00"), TS("2026-11-13 05:00:00"), h100(1)),
	}
	if _, err := s.ReplaceAccruals(ctx, c, now, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApplyBatch(ctx, c, now, batch("slurmdb", TS("2026-11-01 00:00:00"), now, Measure(now, runs...))); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkClosed(ctx, ledger.PeriodRecord{Cluster: c, Period: nov, ClosedAt: TSTime("2026-12-02 03:00:00"), ClosedBy: "test", Currency: "EUR"}); err != nil {
		t.Fatal(err)
	}
	before := AllLines(t, s, c, nov)
	// Slurm corrects them: zero length (a runaway job fixed with
	// sacctmgr: end = start), no GPUs, no start, and one that is
	// unchanged; the last one is still fine.
	runs[0].End = runs[0].Start
	runs[1].GPUs = nil
	runs[2].Start = 0
	runs[3].GPUs = []meter.Alloc{{Type: "h100", Count: 1}}
	st, err := s.ApplyBatch(ctx, c, now, batch("slurmdb", TS("2026-11-01 00:00:00"), now, Measure(now, runs...)))
	if err != nil {
		t.Fatal(err)
	}
	if st.Corrections != 7 || st.Adjustments != 5 {
		t.Errorf("stats %+v, want 7 corrections (run 1: four keys, runs 2-4 one each), 5 of them adjustments", st)
	}
	if d := cmp.Diff(before, AllLines(t, s, c, nov)); d != "" {
		t.Errorf("closed November changed (-want +got)\n%s", d)
	}
	want := map[SumKey]int64{
		// November's use reversed in December, tagged November.
		{dec, nov, "acme", meter.Reserved, "h100", meter.KindAdjustment}:    -2*4*3600 - 5*3600 - 5*3600 - 3*5*3600,
		{dec, nov, "acme", meter.Reserved, "1g.10gb", meter.KindAdjustment}: -4 * 3600,
		// December's part of run 1 is reversed in December itself (sums to 0).
	}
	if d := cmp.Diff(want, Sums(t, s, c, dec)); d != "" {
		t.Errorf("December (-want +got)\n%s", d)
	}
	// Every key of the corrected runs now sums to its measurement.
	total := map[meter.RunKey]int64{}
	for _, p := range []meter.Period{nov, dec} {
		for _, l := range AllLines(t, s, c, p) {
			total[l.Run] += l.GPUSeconds
		}
	}
	wantTotal := map[meter.RunKey]int64{runs[0].Key: 0, runs[1].Key: 0, runs[2].Key: 0, runs[3].Key: 5 * 3600, runs[4].Key: 5 * 3600}
	if d := cmp.Diff(wantTotal, total); d != "" {
		t.Errorf("GPU-seconds per run (-want +got)\n%s", d)
	}
	// Again: nothing more.
	if st, err := s.ApplyBatch(ctx, c, now, batch("slurmdb", TS("2026-11-01 00:00:00"), now, Measure(now, runs...))); err != nil || st.Lines != 0 {
		t.Errorf("second correction wrote %d lines (%v)", st.Lines, err)
	}
}

// checkAllBatch checks that a check-all batch compares runs outside the coverage and moves nothing.
func checkAllBatch(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := context.Background()
	s, c := newStore(t), cluster(t)
	r := run(c, 1, 1, "acme", "pool", TS("2026-11-02 10:00:00"), TS("2026-11-02 11:00:00"), h100(2))
	if _, err := s.ApplyBatch(ctx, c, asOf, batch("slurmdb", TS("2026-11-02 00:00:00"), TS("2026-11-03 00:00:00"), Measure(asOf, r))); err != nil {
		t.Fatal(err)
	}
	st0, err := s.State(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	// The run's record changed days later (a late end record): its
	// end now lies outside every range ingested so far.
	r.End = TS("2026-11-05 11:00:00")
	st, err := s.ApplyBatch(ctx, c, asOf, meter.Batch{Runs: Measure(asOf, r), CheckAll: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Lines != 1 || st.Corrections != 1 || st.Checked != 1 {
		t.Errorf("stats %+v, want one correction", st)
	}
	st1, err := s.State(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(st0.Coverage, st1.Coverage); d != "" {
		t.Errorf("coverage moved (-before +after)\n%s", d)
	}
	if d := cmp.Diff(st0.Watermarks, st1.Watermarks); d != "" {
		t.Errorf("watermark moved (-before +after)\n%s", d)
	}
	want := map[SumKey]int64{{nov, nov, "acme", meter.Reserved, "h100", meter.KindUsage}: 2 * (3*86400 + 3600)}
	if d := cmp.Diff(want, Sums(t, s, c, nov)); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

// bulkComparison checks that the bulk comparison of many runs finds every key.
func bulkComparison(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := context.Background()
	s, c := newStore(t), cluster(t)
	// Job ids in dense runs and far apart, requeues (same id, another
	// submit time), and runs of other ids between them.
	var runs []meter.Run
	id := uint32(100)
	for i := range 3000 {
		switch {
		case i%50 == 0:
			id += 10000 // a far id: looked up alone
		case i%7 == 0:
			id += 40 // just past the range gap
		default:
			id += uint32(1 + i%3)
		}
		start := TS("2026-11-05 00:00:00") + int64(i)*60
		runs = append(runs, run(c, id, int64(1+i%2), "acme", []string{"pool", "ondemand"}[i%2], start, start+int64(600+i), h100(int64(1+i%4))))
		if i%11 == 0 { // a requeue: the same id again
			runs = append(runs, run(c, id, 100+int64(i), "acme", "pool", start+5, start+int64(900+i), mig))
		}
	}
	from, through := TS("2026-11-01 00:00:00"), TS("2026-12-01 00:00:00")
	if _, err := s.ApplyBatch(ctx, c, asOf, batch("slurmdb", from, through, Measure(asOf, runs...))); err != nil {
		t.Fatal(err)
	}
	if st, err := s.ApplyBatch(ctx, c, asOf, batch("slurmdb", from, through, Measure(asOf, runs...))); err != nil || st.Lines != 0 || st.Checked != len(runs) {
		t.Fatalf("re-read: %+v, %v; want no lines and every run checked", st, err)
	}
	// Change every 13th run: one second shorter.
	n := 0
	for i := range runs {
		if i%13 == 0 {
			runs[i].End--
			n += len(runs[i].GPUs)
		}
	}
	st, err := s.ApplyBatch(ctx, c, asOf, batch("slurmdb", from, through, Measure(asOf, runs...)))
	if err != nil || st.Lines != n || st.Corrections != n {
		t.Fatalf("corrections: %+v, %v; want %d", st, err, n)
	}
	var want, got int64
	for _, mr := range Measure(asOf, runs...) {
		for _, u := range mr.Usages {
			want += u.GPUSeconds
		}
	}
	for _, l := range AllLines(t, s, c, nov) {
		got += l.GPUSeconds
	}
	if want != got {
		t.Errorf("ledger holds %d GPU-seconds, the runs %d", got, want)
	}
}

// unorderedWindowKilled checks that an unordered window killed half-way is touched, not covered.
func unorderedWindowKilled(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := context.Background()
	s, c := newStore(t), cluster(t)
	from, to := TS("2026-11-01 00:00:00"), TS("2026-12-02 00:00:00")
	now := to
	a := run(c, 1, 1, "acme", "pool", TS("2026-11-20 10:00:00"), TS("2026-11-20 11:00:00"), h100(1))
	b := run(c, 2, 1, "acme", "pool", TS("2026-11-05 10:00:00"), TS("2026-11-05 11:00:00"), h100(1))
	win := meter.Batch{Source: "slurmdb", From: from, Through: from, Touch: interval.Interval{Start: from, End: to}, Fresh: interval.Set{{Start: from, End: to}}}
	first := win
	first.Runs = Measure(now, a)
	if _, err := s.ReplaceAccruals(ctx, c, now, nil); err != nil {
		t.Fatal(err)
	}
	if st, err := s.ApplyBatch(ctx, c, now, first); err != nil || st.Lines != 1 {
		t.Fatalf("first batch: %+v, %v; want one line", st, err)
	}
	// The ingest dies here. The window may hold lines, but is not covered.
	st, err := s.State(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Coverage) != 0 || len(st.Watermarks) != 0 {
		t.Errorf("half a window covered %v, watermarks %v", st.Coverage, st.Watermarks)
	}
	if _, err := ledger.Close(ctx, s, ledger.CloseRequest{Cluster: c, Period: nov, Now: TSTime("2026-12-02 00:00:00"), Card: Card(t)}); !errors.Is(err, ledger.ErrNotIngested) {
		t.Errorf("close on half a window: %v, want ErrNotIngested", err)
	}
	// The next ingest of the window: nothing of it is fresh, so run a
	// is compared (and left alone), run b inserted; the last batch covers.
	next := win
	next.Runs, next.Fresh, next.Through = Measure(now, b, a), interval.Set{}, to
	if st, err := s.ApplyBatch(ctx, c, now, next); err != nil || st.Lines != 1 || st.Corrections != 0 {
		t.Fatalf("resumed window: %+v, %v; want run b's line only", st, err)
	}
	st, err = s.State(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([][2]int64{{from, to}}, st.Coverage); d != "" || st.Watermarks["slurmdb"].Through != to {
		t.Errorf("coverage (-want +got)\n%s watermark %+v", d, st.Watermarks)
	}
	want := map[SumKey]int64{{nov, nov, "acme", meter.Reserved, "h100", meter.KindUsage}: 7200}
	if d := cmp.Diff(want, Sums(t, s, c, nov)); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

// passesAndAccrualRuns checks the recorded passes and the runs of the accruals.
func passesAndAccrualRuns(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := context.Background()
	s, c := newStore(t), cluster(t)
	if _, ok, err := s.Pass(ctx, c, "slurmdb", meter.PassChanges); ok || err != nil {
		t.Fatalf("pass before any: %v %v", ok, err)
	}
	p := meter.Pass{Kind: meter.PassChanges, Source: "slurmdb", AsOf: 100, From: 50, Finished: 101, Runs: 3, Lines: 2, Corrections: 1}
	for _, q := range []meter.Pass{{Kind: meter.PassChanges, Source: "slurmdb", AsOf: 10}, p, {Kind: meter.PassVerify, Source: "slurmdb", AsOf: 90}} {
		if err := s.RecordPass(ctx, c, q); err != nil {
			t.Fatal(err)
		}
	}
	got, ok, err := s.Pass(ctx, c, "slurmdb", meter.PassChanges)
	if err != nil || !ok || got != p {
		t.Errorf("pass %+v %v %v, want %+v", got, ok, err, p)
	}
	st, err := s.State(ctx, c)
	if err != nil || len(st.Passes) != 2 || st.Passes[0] != p || st.Passes[1].Kind != meter.PassVerify {
		t.Errorf("state passes %+v (%v)", st.Passes, err)
	}
	r1 := run(c, 9, 1, "acme", "pool", TS("2026-12-10 00:00:00"), 0, h100(1))
	r2 := run(c, 3, 1, "acme", "pool", TS("2026-12-11 00:00:00"), 0, h100(1), mig)
	if _, err := s.ReplaceAccruals(ctx, c, asOf, Measure(asOf, r1, r2)); err != nil {
		t.Fatal(err)
	}
	keys, err := s.AccrualRuns(ctx, c)
	if d := cmp.Diff([]meter.RunKey{r2.Key, r1.Key}, keys); d != "" || err != nil {
		t.Errorf("accrual runs (-want +got)\n%s %v", d, err)
	}
}

// ledgerLock checks that the ledger lock excludes a second holder.
func ledgerLock(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := context.Background()
	s, c := newStore(t), cluster(t)
	release, err := s.Lock(ctx, c, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lock(ctx, c, 0); !errors.Is(err, ledger.ErrLocked) {
		t.Errorf("second lock: %v, want ErrLocked", err)
	}
	release()
	release2, err := s.Lock(ctx, c, time.Second)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	release2()
}

func accruals(t testing.TB, s Store, c string, p meter.Period) int64 {
	t.Helper()
	var n int64
	if err := s.Accruals(context.Background(), c, ledger.LineQuery{Booked: p, Ordered: true, Account: "acme"}, func(l meter.Line) error {
		if l.Kind() != meter.KindAccrual {
			t.Errorf("accrual line of kind %s", l.Kind())
		}
		n += l.GPUSeconds
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TSTime parses "2006-01-02 15:04:05" as UTC.
func TSTime(s string) time.Time { return time.Unix(TS(s), 0).UTC() }

func mustDate(s string) pricing.Date {
	d, err := pricing.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}
