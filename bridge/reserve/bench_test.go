package reserve_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/reservetest"
	"github.com/gpubridge/gpubridge/bridge/reserve/store"
)

// The year of bookings the benchmarks share: 10,000 bookings on 20 types
// of 32 GPUs each (test/bench/bookings.sh prints the same figures against
// the naive scan and the CLI's wall time).
var benchSynth = reservetest.Synth{Seed: 7, Types: 20, PerType: 32, Bookings: 10_000, Tenants: 40,
	From: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), Span: 365 * 24 * time.Hour}

type benchData struct {
	svc      *reserve.Service
	bookings []reserve.Booking
	inv      reserve.Inventory
}

var benchCache *benchData

func benchSetup(b *testing.B) *benchData {
	b.Helper()
	if benchCache != nil {
		return benchCache
	}
	bs := benchSynth.Generate()
	if len(bs) != benchSynth.Bookings {
		b.Fatalf("generated %d bookings", len(bs))
	}
	st := store.NewMemory()
	if err := st.Atomic(context.Background(), nil, func(tx reserve.Tx) error {
		for _, bk := range bs {
			if _, err := tx.Insert(context.Background(), "bench", bk); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	inv := benchSynth.Inventory()
	svc := &reserve.Service{Store: st, Source: &fakeSource{inv: inv}, Tenants: fakeTenants{}, Settings: reserve.Settings{Prefix: "gpubridge-"},
		Now: func() time.Time { return benchSynth.From }}
	benchCache = &benchData{svc: svc, bookings: bs, inv: inv}
	return benchCache
}

// BenchmarkAvailability is `show availability` over the year, every type,
// step 1d: read the bookings, build 20 calendars, 365 buckets each.
func BenchmarkAvailability(b *testing.B) {
	d := benchSetup(b)
	q := reserve.AvailabilityQuery{From: benchSynth.From, To: benchSynth.From.Add(benchSynth.Span), Step: 24 * time.Hour}
	b.ResetTimer()
	for b.Loop() {
		if _, err := d.svc.Availability(context.Background(), q); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAvailabilityNaive is the same answer by scanning every booking
// of a type at every instant a bucket must look at.
func BenchmarkAvailabilityNaive(b *testing.B) {
	d := benchSetup(b)
	s := reserve.Settings{Prefix: "gpubridge-"}
	var cs []reserve.Commitment
	for _, bk := range d.bookings {
		cs = append(cs, s.Commitments(bk, d.inv)...)
	}
	b.ResetTimer()
	for b.Loop() {
		for i := range benchSynth.Types {
			n := reservetest.Naive{Capacity: reserve.Capacity{Resource: reserve.GPU(reservetest.TypeName(i)), Total: benchSynth.PerType}, Commits: cs}
			n.Timeline(benchSynth.From, benchSynth.From.Add(benchSynth.Span), 24*time.Hour)
		}
	}
}

// BenchmarkFindSlot is `find slot type=t00 count=8 duration=14d` from the
// start of the year.
func BenchmarkFindSlot(b *testing.B) {
	d := benchSetup(b)
	q := reserve.SlotQuery{Type: reservetest.TypeName(0), Count: 8, Duration: 14 * 24 * time.Hour, After: benchSynth.From}
	b.ResetTimer()
	for b.Loop() {
		if _, err := d.svc.FindSlots(context.Background(), q); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFindSlotNaive scans candidate starts, each against every
// booking of the type.
func BenchmarkFindSlotNaive(b *testing.B) {
	d := benchSetup(b)
	s := reserve.Settings{Prefix: "gpubridge-"}
	var cs []reserve.Commitment
	for _, bk := range d.bookings {
		if bk.GPUType == reservetest.TypeName(0) {
			cs = append(cs, s.Commitments(bk, d.inv)...)
		}
	}
	n := reservetest.Naive{Capacity: reserve.Capacity{Resource: reserve.GPU(reservetest.TypeName(0)), Total: benchSynth.PerType}, Commits: cs}
	b.ResetTimer()
	for b.Loop() {
		n.Earliest(8, benchSynth.From, 14*24*time.Hour, benchSynth.From.Add(2*365*24*time.Hour))
	}
}

// TestBenchAnswersAgree: the calendar and the naive scan give the same
// availability and the same earliest slot on the benchmark's year.
func TestBenchAnswersAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: the naive scan")
	}
	d := benchSetup(&testing.B{})
	q := reserve.AvailabilityQuery{Types: []string{reservetest.TypeName(3)}, From: benchSynth.From, To: benchSynth.From.Add(benchSynth.Span), Step: 24 * time.Hour}
	av, err := d.svc.Availability(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	s := reserve.Settings{Prefix: "gpubridge-"}
	var cs []reserve.Commitment
	for _, bk := range d.bookings {
		cs = append(cs, s.Commitments(bk, d.inv)...)
	}
	n := reservetest.Naive{Capacity: reserve.Capacity{Resource: reserve.GPU(reservetest.TypeName(3)), Total: benchSynth.PerType}, Commits: cs}
	want := n.Timeline(q.From, q.To, q.Step)
	if len(av.Resources) != 1 || len(av.Resources[0].Buckets) != len(want) {
		t.Fatalf("buckets: %d vs %d", len(av.Resources[0].Buckets), len(want))
	}
	for i := range want {
		if av.Resources[0].Buckets[i] != want[i] {
			t.Fatalf("bucket %d: %+v vs naive %+v", i, av.Resources[0].Buckets[i], want[i])
		}
	}
	slots, err := d.svc.FindSlots(context.Background(), reserve.SlotQuery{Type: reservetest.TypeName(3), Count: 8, Duration: 14 * 24 * time.Hour, After: benchSynth.From})
	if err != nil {
		t.Fatal(err)
	}
	var cs3 []reserve.Commitment
	for _, c := range cs {
		if c.Resource == reserve.GPU(reservetest.TypeName(3)) {
			cs3 = append(cs3, c)
		}
	}
	n.Commits = cs3
	e, ok := n.Earliest(8, benchSynth.From, 14*24*time.Hour, benchSynth.From.Add(2*365*24*time.Hour-14*24*time.Hour))
	if !ok || len(slots) == 0 || !slots[0].Start.Equal(e) {
		t.Fatalf("earliest: calendar %+v, naive %v %v", slots, e, ok)
	}
}

// benchAdmission is one admission of 4 GPUs of type 0 for days in the
// first window from mid-year that fits, against the bookings that overlap
// it; spread puts
// each type on two nodes of half the GPUs (the placement model is then
// consulted: the choice of node matters).
func benchAdmission(b *testing.B, spread bool, days int) {
	d := benchSetup(b)
	inv := d.inv
	if spread {
		inv = reserve.Inventory{}
		for _, n := range d.inv.Nodes {
			for t, c := range n.GPUs {
				inv.Nodes = append(inv.Nodes, reserve.Node{Name: n.Name + "x", GPUs: map[string]int{t: c / 2}}, reserve.Node{Name: n.Name + "y", GPUs: map[string]int{t: c - c/2}})
			}
		}
	}
	typ := reservetest.TypeName(0)
	from := benchSynth.From.Add(180 * 24 * time.Hour)
	a := reserve.Admission{Settings: reserve.Settings{Prefix: "gpubridge-"}, Inventory: inv, Now: benchSynth.From}
	probe := reserve.Booking{Tenant: "t00", Kind: reserve.KindGPU, GPUType: typ, Count: 4, Start: from, End: from.Add(time.Duration(days) * 24 * time.Hour), State: reserve.StateRequested}
	// The first window from mid-year where the count admits it.
	if next := a.NextWindows(probe, d.bookings, from, time.Time{}, 1); len(next) == 1 {
		probe.Start, probe.End = next[0].Start, next[0].End
	}
	var others []reserve.Booking
	for _, bk := range d.bookings {
		if bk.GPUType == typ && bk.Start.Before(probe.End) && bk.End.After(probe.Start) {
			others = append(others, bk)
		}
	}
	if ref := a.Check(probe, others); ref != nil {
		b.Logf("refused: %v", ref)
	}
	b.ResetTimer()
	for b.Loop() {
		a.Check(probe, others)
	}
	b.ReportMetric(float64(len(others)), "others")
}

// BenchmarkAdmissionCheck: one node per type (the count per type is exact).
func BenchmarkAdmissionCheck(b *testing.B) { benchAdmission(b, false, 3) }

// BenchmarkAdmissionCheckSpread: each type on two nodes (placement search).
func BenchmarkAdmissionCheckSpread(b *testing.B) { benchAdmission(b, true, 3) }

// BenchmarkAdmissionCheckSpreadLong: the same for 60 days (more overlap).
func BenchmarkAdmissionCheckSpreadLong(b *testing.B) { benchAdmission(b, true, 60) }

// BenchmarkAdmissionCheckLong: 60 days, one node per type.
func BenchmarkAdmissionCheckLong(b *testing.B) { benchAdmission(b, false, 60) }
