package ingest

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/interval"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

var rules = meter.TierRules{OnDemandPartition: "ondemand", OnDemandQOS: "ondemand"}

// row is a job-table row: a run plus its job_db_inx, eligible time and
// mod_time.
type row struct {
	run      meter.Run
	inx      uint64
	eligible int64
	mod      int64
}

// tableSource behaves like SlurmDB over an in-memory job table: without
// q.AllRows it skips runs that never started or hold no GPUs (SlurmDB's
// filter), and it reads changes (q.Lookup, q.ChangedSince by mod).
type tableSource struct {
	rows      []row
	failAfter int // fail after delivering this many finished runs (0: never)
}

func (s *tableSource) Name() string       { return "slurmdb" }
func (s *tableSource) ReadsChanges() bool { return true }

func (s *tableSource) Read(ctx context.Context, q Query, h Handler) error {
	delivered := map[meter.RunKey]bool{}
	var running []meter.Run
	for _, r := range s.rows {
		if r.run.End == 0 && r.run.Start > 0 {
			running = append(running, r.run)
			delivered[r.run.Key] = true
		}
	}
	if err := h.Running(running); err != nil {
		return err
	}
	var fin []row
	for _, r := range s.rows {
		if r.run.End >= q.From && r.run.End < q.To && (q.AllRows || r.run.Start > 0 && len(r.run.GPUs) > 0) {
			fin = append(fin, r)
		}
	}
	slices.SortFunc(fin, func(a, b row) int { return cmp.Or(cmp.Compare(a.run.End, b.run.End), cmp.Compare(a.inx, b.inx)) })
	n := 0
	for _, r := range fin {
		if r.run.End == q.From && r.inx <= q.After {
			continue
		}
		if s.failAfter > 0 && n == s.failAfter {
			return errors.New("killed")
		}
		n++
		delivered[r.run.Key] = true
		if err := h.Finished(r.run, r.inx); err != nil {
			return err
		}
	}
	for _, k := range q.Lookup {
		for _, r := range s.rows {
			if r.run.Key == k && r.run.End > 0 && !delivered[k] {
				delivered[k] = true
				if err := h.Changed(r.run); err != nil {
					return err
				}
			}
		}
	}
	if q.ChangedSince == 0 {
		return nil
	}
	for _, r := range s.rows {
		if r.mod >= q.ChangedSince && r.run.End > 0 && r.run.End < q.From && !delivered[r.run.Key] {
			if err := h.Changed(r.run); err != nil {
				return err
			}
		}
	}
	return nil
}

// restFake answers ListDBJobs like slurmdbd: every record eligible before
// the window's end that had not ended before its start.
type restFake struct {
	rows    []row
	windows []time.Duration
}

func (f *restFake) ListDBJobs(_ context.Context, flt slurmrest.DBJobFilter) ([]slurmrest.DBJob, error) {
	if !flt.ShowDuplicates || !flt.SkipSteps {
		return nil, errors.New("want show_duplicates and skip_steps")
	}
	f.windows = append(f.windows, flt.End.Sub(flt.Start))
	s, e := flt.Start.Unix(), flt.End.Unix()
	var out []slurmrest.DBJob
	for _, r := range f.rows {
		if r.eligible == 0 || r.eligible > e || (r.run.End != 0 && r.run.End < s) {
			continue
		}
		j := slurmrest.DBJob{JobID: int64(r.run.Key.JobID), Account: r.run.Account, User: r.run.User, Partition: r.run.Partition,
			QOS: r.run.QOS, SubmitTime: time.Unix(r.run.Key.Submit, 0)}
		if r.run.Start > 0 {
			j.StartTime = time.Unix(r.run.Start, 0)
		}
		if r.run.End > 0 {
			j.EndTime = time.Unix(r.run.End, 0)
		}
		for _, g := range r.run.GPUs {
			name := "gpu:" + g.Type
			if g.Type == meter.UntypedGPU {
				name = "gpu"
			}
			j.TRESAllocated = append(j.TRESAllocated, slurmrest.TRES{Type: "gres", Name: name, Count: g.Count})
		}
		j.TRESAllocated = append(j.TRESAllocated, slurmrest.TRES{Type: "cpu", Count: 4})
		out = append(out, j)
	}
	return out, nil
}

func ts(s string) int64 {
	t, err := time.Parse(time.DateTime, s)
	if err != nil {
		panic(err)
	}
	return t.Unix()
}

// randomRows makes a job table over Oct-Dec 2026: full GPUs, MIG slices,
// untyped GPUs, CPU-only jobs, requeues (same id, new submit time), reused
// ids, jobs cancelled before start, jobs ending on month edges and jobs
// still running at asOf.
func randomRows(seed uint64, n int, asOf int64) []row {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	base := ts("2026-10-01 00:00:00")
	span := ts("2026-12-20 00:00:00") - base
	var rows []row
	inx := uint64(1 << 60)
	accounts := []string{"acme", "beta", "gamma", "m4-none"}
	types := [][]meter.Alloc{{{Type: "h100", Count: 1}}, {{Type: "h100", Count: 4}}, {{Type: "1g.10gb", Count: 1}}, {{Type: "3g.40gb", Count: 2}},
		{{Type: "h100", Count: 1}, {Type: "1g.10gb", Count: 1}}, {{Type: meter.UntypedGPU, Count: 2}}, nil}
	for i := range n {
		submit := base + rng.Int64N(span)
		start := submit + rng.Int64N(3600)
		end := start + rng.Int64N(5*86400)
		switch rng.IntN(20) {
		case 0: // cancelled while pending
			start, end = 0, submit+60
		case 1: // ends exactly on a month edge
			end = meter.PeriodOfUnix(start).EndUnix()
		case 2, 3: // still running
			end = 0
		}
		if end > asOf {
			end = 0
		}
		if start > asOf {
			continue
		}
		part := []string{"pool", "pool", "ondemand"}[rng.IntN(3)]
		qos := []string{"normal", "ondemand"}[rng.IntN(2)]
		id := uint32(1000 + i)
		if rng.IntN(30) == 0 && len(rows) > 0 { // requeue or reused id: same id, new submit time
			id = rows[rng.IntN(len(rows))].run.Key.JobID
		}
		inx++
		rows = append(rows, row{
			run: meter.Run{Key: meter.RunKey{Cluster: "c", JobID: id, Submit: submit}, Account: accounts[rng.IntN(len(accounts))], User: "u",
				Partition: part, QOS: qos, Start: start, End: end, GPUs: types[rng.IntN(len(types))]},
			inx: inx, eligible: submit, mod: max(submit, start, end),
		})
	}
	// (id, submit) is unique in slurmdbd.
	seen := map[meter.RunKey]bool{}
	return slices.DeleteFunc(rows, func(r row) bool {
		d := seen[r.run.Key]
		seen[r.run.Key] = true
		return d
	})
}

type refKey struct {
	Account string
	Period  string
	Tier    meter.Tier
	Type    string
}

// reference recomputes GPU-seconds independently of meter.Split: month by
// month with time.AddDate, tier by plain comparison.
func reference(rows []row, asOf int64) map[refKey]int64 {
	out := map[refKey]int64{}
	for _, r := range rows {
		if r.run.Start == 0 {
			continue
		}
		stop := r.run.End
		if stop == 0 {
			stop = asOf
		}
		tier := meter.Reserved
		if r.run.Partition == "ondemand" || r.run.QOS == "ondemand" {
			tier = meter.OnDemand
		}
		t := time.Unix(r.run.Start, 0).UTC()
		m := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		for ; m.Unix() < stop; m = m.AddDate(0, 1, 0) {
			s, e := max(r.run.Start, m.Unix()), min(stop, m.AddDate(0, 1, 0).Unix())
			if e <= s {
				continue
			}
			for _, g := range r.run.GPUs {
				out[refKey{r.run.Account, m.Format("2006-01"), tier, g.Type}] += g.Count * (e - s)
			}
		}
	}
	return out
}

// fromLedger sums lines (booked anywhere) and accruals by usage period.
func fromLedger(t *testing.T, l *ledger.Memory) map[refKey]int64 {
	t.Helper()
	out := map[refKey]int64{}
	for p := meter.PeriodOfUnix(ts("2026-09-01 00:00:00")); p <= meter.PeriodOfUnix(ts("2027-02-01 00:00:00")); p++ {
		add := func(l meter.Line) error {
			out[refKey{l.Account, l.Period.String(), l.Tier, l.Type}] += l.GPUSeconds
			return nil
		}
		if err := l.Lines(context.Background(), "c", ledger.LineQuery{Booked: p}, add); err != nil {
			t.Fatal(err)
		}
		if err := l.Accruals(context.Background(), "c", ledger.LineQuery{Booked: p}, add); err != nil {
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

func newIngester(src Source, l Ledger, asOf int64) *Ingester {
	return &Ingester{Cluster: "c", Source: src, Ledger: l, Rules: rules, BatchRuns: 50,
		Clock: func() time.Time { return time.Unix(asOf, 0) }}
}

var window = Window{From: time.Unix(ts("2026-09-01 00:00:00"), 0)}

func TestIngestMatchesIndependentReference(t *testing.T) {
	asOf := ts("2026-12-20 00:00:00")
	for seed := range uint64(5) {
		rows := randomRows(seed, 3000, asOf)
		l := ledger.NewMemory()
		in := newIngester(&tableSource{rows: rows}, l, asOf)
		res, err := in.Ingest(context.Background(), window)
		if err != nil {
			t.Fatal(err)
		}
		if d := gocmp.Diff(reference(rows, asOf), fromLedger(t, l)); d != "" {
			t.Fatalf("seed %d: ledger vs reference (-want +got)\n%s", seed, d)
		}
		if res.Stats.Lines == 0 || res.Running == 0 {
			t.Fatalf("seed %d: suspicious result %+v", seed, res)
		}
		again, err := in.Ingest(context.Background(), window)
		if err != nil {
			t.Fatal(err)
		}
		if again.Stats.Lines != 0 {
			t.Errorf("seed %d: re-ingest wrote %d lines, want 0", seed, again.Stats.Lines)
		}
	}
}

// crashLedger stops committing after n batches, like a kill -9.
type crashLedger struct {
	*ledger.Memory
	n int
}

func (c *crashLedger) ApplyBatch(ctx context.Context, cluster string, asOf int64, b meter.Batch) (meter.WriteStats, error) {
	if c.n == 0 {
		return meter.WriteStats{}, errors.New("killed")
	}
	c.n--
	return c.Memory.ApplyBatch(ctx, cluster, asOf, b)
}

// unorderedSource is a tableSource that delivers the finished runs of its
// window in a shuffled order, like SlurmDB (Unordered).
type unorderedSource struct{ tableSource }

func (s *unorderedSource) Unordered() {}

func (s *unorderedSource) Read(ctx context.Context, q Query, h Handler) error {
	rows := slices.Clone(s.rows)
	rand.New(rand.NewPCG(uint64(q.From), 7)).Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	for i := range rows {
		rows[i].inx = 0 // no tie-break order
	}
	return (&tableSource{rows: rows, failAfter: s.failAfter}).Read(ctx, q, h)
}

func TestIngestResumesAfterKill(t *testing.T) {
	asOf := ts("2026-12-20 00:00:00")
	rows := randomRows(42, 2000, asOf)
	want := reference(rows, asOf)
	for _, k := range []int{0, 1, 3, 7, 15} {
		for _, mode := range []string{"ledger", "source", "unordered ledger", "unordered source"} {
			viaSource := strings.HasSuffix(mode, "source")
			l := ledger.NewMemory()
			newSrc := func(failAfter int) Source {
				if strings.HasPrefix(mode, "unordered") {
					return &unorderedSource{tableSource{rows: rows, failAfter: failAfter}}
				}
				return &tableSource{rows: rows, failAfter: failAfter}
			}
			src := newSrc(0)
			var led Ledger = &crashLedger{Memory: l, n: k}
			if viaSource {
				src, led = newSrc(k*37+1), l
			}
			if _, err := newIngester(src, led, asOf).Ingest(context.Background(), window); err == nil {
				t.Fatalf("k=%d: the first ingest should have been killed", k)
			}
			// Rerun with the default window: from the watermark (no lookback).
			in := newIngester(newSrc(0), l, asOf)
			in.Lookback = -1
			w := Window{}
			if _, ok, _ := l.Watermark(context.Background(), "c", "slurmdb"); !ok {
				w = window // killed before the first batch: nothing to resume from
			}
			if _, err := in.Ingest(context.Background(), w); err != nil {
				t.Fatal(err)
			}
			if d := gocmp.Diff(want, fromLedger(t, l)); d != "" {
				t.Fatalf("k=%d %s: (-want +got)\n%s", k, mode, d)
			}
			for p := meter.PeriodOfUnix(ts("2026-10-01 00:00:00")); p <= meter.PeriodOfUnix(asOf); p++ {
				if err := l.Lines(context.Background(), "c", ledger.LineQuery{Booked: p}, func(l meter.Line) error {
					if l.Revision != 0 {
						t.Errorf("k=%d: line %v has revision %d: counted twice and corrected", k, l.Key(), l.Revision)
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

func TestRESTSourceGivesTheSameLedger(t *testing.T) {
	asOf := ts("2026-12-20 00:00:00")
	rows := randomRows(7, 1500, asOf)
	viaTable := ledger.NewMemory()
	if _, err := newIngester(&tableSource{rows: rows}, viaTable, asOf).Ingest(context.Background(), window); err != nil {
		t.Fatal(err)
	}
	fake := &restFake{rows: rows}
	rest := NewREST(fake, "c")
	rest.Window, rest.MaxJobs = 6*time.Hour, 120
	viaREST := ledger.NewMemory()
	if _, err := newIngester(rest, viaREST, asOf).Ingest(context.Background(), window); err != nil {
		t.Fatal(err)
	}
	for p := meter.PeriodOfUnix(ts("2026-10-01 00:00:00")); p <= meter.PeriodOfUnix(asOf); p++ {
		a := allLines(t, viaTable, p)
		b := allLines(t, viaREST, p)
		if d := gocmp.Diff(a, b); d != "" {
			t.Fatalf("%s: table vs REST lines (-table +rest)\n%s", p, d)
		}
	}
	if d := gocmp.Diff(fromLedger(t, viaTable), fromLedger(t, viaREST)); d != "" {
		t.Fatalf("accruals differ (-table +rest)\n%s", d)
	}
	shrunk, grew := false, false
	for i := 1; i < len(fake.windows); i++ {
		shrunk = shrunk || fake.windows[i] < fake.windows[i-1]
		grew = grew || fake.windows[i] > fake.windows[i-1]
	}
	if !shrunk || !grew {
		t.Errorf("windows did not adapt both ways: %v", fake.windows)
	}
}

func allLines(t *testing.T, l *ledger.Memory, p meter.Period) []meter.Line {
	var out []meter.Line
	if err := l.Lines(context.Background(), "c", ledger.LineQuery{Booked: p, Ordered: true}, func(l meter.Line) error {
		out = append(out, l)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDefaultWindow(t *testing.T) {
	asOf := ts("2026-12-20 12:00:00")
	l := ledger.NewMemory()
	var got []Query
	src := &recordingSource{queries: &got}
	in := newIngester(src, l, asOf)
	if _, err := in.Ingest(context.Background(), Window{}); err != nil {
		t.Fatal(err)
	}
	in.Lookback = time.Hour
	if _, err := in.Ingest(context.Background(), Window{}); err != nil {
		t.Fatal(err)
	}
	in.Lookback = -1
	if _, err := in.Ingest(context.Background(), Window{To: time.Unix(asOf-60, 0)}); err == nil {
		t.Error("a window ending before its start must be refused")
	}
	want := []Query{
		{From: ts("2026-11-01 00:00:00"), To: asOf, CheckFrom: ts("2026-11-01 00:00:00")},
		// The lookback re-reads an hour, every run of it (a run corrected to
		// zero must reach the ledger); only what lies past the watermark is
		// checked for purged rows.
		{From: asOf - 3600, To: asOf, CheckFrom: asOf, AllRows: true},
	}
	if d := gocmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

type recordingSource struct{ queries *[]Query }

func (s *recordingSource) Name() string { return "slurmdb" }
func (s *recordingSource) Read(_ context.Context, q Query, h Handler) error {
	*s.queries = append(*s.queries, q)
	return h.Running(nil)
}

func TestProgress(t *testing.T) {
	asOf := ts("2026-12-20 00:00:00")
	rows := randomRows(3, 1000, asOf)
	in := newIngester(&tableSource{rows: rows}, ledger.NewMemory(), asOf)
	var ps []Progress
	in.Progress = func(p Progress) { ps = append(ps, p) }
	if _, err := in.Ingest(context.Background(), window); err != nil {
		t.Fatal(err)
	}
	if len(ps) < 3 || !ps[len(ps)-1].Done || ps[len(ps)-1].Fraction() != 1 {
		t.Fatalf("progress %v", ps)
	}
	for i := 1; i < len(ps); i++ {
		if ps[i].At.Before(ps[i-1].At) || ps[i].Runs < ps[i-1].Runs || ps[i].Fraction() < ps[i-1].Fraction() {
			t.Fatalf("progress went back: %+v then %+v", ps[i-1], ps[i])
		}
	}
}

func TestFresh(t *testing.T) {
	cases := map[string]struct {
		from, to int64
		touched  interval.Set
		want     interval.Set
	}{
		"nothing touched":     {10, 20, nil, interval.Set{{Start: 10, End: 20}}},
		"all touched":         {10, 20, interval.Set{{Start: 0, End: 30}}, interval.Set{}},
		"touched before":      {10, 20, interval.Set{{Start: 0, End: 12}}, interval.Set{{Start: 12, End: 20}}},
		"touched after":       {10, 20, interval.Set{{Start: 15, End: 25}}, interval.Set{{Start: 10, End: 15}}},
		"a hole":              {10, 20, interval.Set{{Start: 0, End: 12}, {Start: 14, End: 16}, {Start: 18, End: 30}}, interval.Set{{Start: 12, End: 14}, {Start: 16, End: 18}}},
		"outside":             {10, 20, interval.Set{{Start: 0, End: 5}, {Start: 25, End: 30}}, interval.Set{{Start: 10, End: 20}}},
		"touching the window": {10, 20, interval.Set{{Start: 0, End: 10}, {Start: 20, End: 30}}, interval.Set{{Start: 10, End: 20}}},
		"empty window":        {10, 10, nil, interval.Set{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := gocmp.Diff(tc.want, freshParts(interval.Interval{Start: tc.from, End: tc.to}, tc.touched)); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}
