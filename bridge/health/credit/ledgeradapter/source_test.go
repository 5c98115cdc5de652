package ledgeradapter

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/ledger/ledgertest"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/credit"
	"github.com/gpubridge/gpubridge/internal/money"
)

type ends []billing.RunEnd

func (e ends) AbnormalEnds(_ context.Context, from, to time.Time) ([]billing.RunEnd, error) {
	var out []billing.RunEnd
	for _, r := range e {
		if r.End >= from.Unix() && r.End < to.Unix() {
			out = append(out, r)
		}
	}
	return out, nil
}

type events []health.Event

func (e events) Events(context.Context, string, time.Time) ([]health.Event, error) { return e, nil }

// TestCreditJobOverTheLedger: the credit job over the ledger adapters
// credits a NODE_FAIL run of a tenant exactly what the ledger charged for
// it (two periods: a closed October priced with its stored card, an open
// November with the current one), linked to the drain of its node; a
// failed run of a non-tenant, a run the ledger has not ingested yet and a
// CANCELLED run no drain explains get none; a rerun adds nothing; the
// period view shows the credit and its total drops by exactly it.
const cluster = "c"

// books is the books of ledgertest.Books, labelled with one tenant (Acme).
func books(t *testing.T) (billing.Books, *ledger.Memory, *ratecard.Memory) {
	t.Helper()
	l, cards := ledgertest.Books(t, cluster)
	b := billing.Books{Cluster: cluster, Ledger: l, Cards: cards, Labels: func(ctx context.Context) (ledger.Labeler, error) {
		return billing.TenantLabels(ctx, names{"Acme"})
	}}
	return b, l, cards
}

type names []string

func (n names) Names(context.Context) ([]string, error) { return n, nil }

func TestCreditJobOverTheLedger(t *testing.T) {
	ctx := context.Background()
	b, l, _ := books(t)
	asOf := ledgertest.TS("2026-11-20 00:00:00")
	h100 := []meter.Alloc{{Type: "h100", Count: 2}}
	run := func(id uint32, acct string, start, end string) meter.Run {
		return meter.Run{Key: meter.RunKey{Cluster: cluster, JobID: id, Submit: ledgertest.TS(start) - 60}, Account: acct, Partition: "pool",
			Start: ledgertest.TS(start), End: ledgertest.TS(end), GPUs: h100}
	}
	failed := run(10, "acme", "2026-10-31 23:00:00", "2026-11-15 01:00:00")
	other := run(11, "nobody", "2026-11-15 00:00:00", "2026-11-15 01:00:00")
	cancelled := run(12, "acme", "2026-11-15 00:00:00", "2026-11-15 01:00:00")
	late := run(13, "acme", "2026-11-19 00:00:00", "2026-11-20 00:30:00") // ends after the ingest
	// October's part of the failed run was written, then October closed
	// with a card at 3.00; November's with the current card (2.10).
	oct := ledgertest.TS("2026-11-01 00:00:00")
	if _, err := l.ApplyBatch(ctx, cluster, oct, meter.Batch{Source: "t", From: 0, Through: 0, CheckAll: true, Runs: ledgertest.Measure(oct, func() meter.Run { r := failed; r.End = 0; return r }())}); err != nil {
		t.Fatal(err)
	}
	card := ledgertest.Card(t)
	octCard := card
	octCard.Rates = append(octCard.Rates[:0:0], card.Rates...)
	for i := range octCard.Rates {
		octCard.Rates[i].PerGPUHour *= 3
	}
	if err := l.MarkClosed(ctx, ledger.PeriodRecord{Cluster: cluster, Period: ledgertest.P("2026-10"), ClosedAt: time.Unix(oct, 0), ClosedBy: "t",
		Amount: money.Zero(card.Unit()), Currency: "EUR", Snapshot: ledger.Snapshot{Card: octCard}}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ApplyBatch(ctx, cluster, asOf, meter.Batch{Source: "t", Runs: ledgertest.Measure(asOf, failed, other, cancelled), From: 0, Through: asOf}); err != nil {
		t.Fatal(err)
	}
	// Independent recomputation: 2 GPUs x 1 h at 6.30 (October's card)
	// and 2 GPUs x 14 days 1 h at 2.10.
	want := money.New(2*630+2*(14*24+1)*210, card.Unit())
	before, err := b.Summary(ctx, meter.PeriodOfUnix(asOf), "")
	if err != nil {
		t.Fatal(err)
	}
	drain := health.Event{ID: 77, Node: "gpu-a", At: time.Unix(failed.End-30, 0), From: health.Serving, To: health.Drained, Reason: "xid failed", Fatal: true}
	end := func(r meter.Run, state string) billing.RunEnd {
		return billing.RunEnd{Key: r.Key, Account: r.Account, State: state, Nodes: []string{"gpu-a"}, Start: r.Start, End: r.End}
	}
	src := CreditSource{Cluster: cluster, Ledger: l, Cards: b.Cards, Labels: b.Labels, Health: events{drain},
		Ends: ends{end(failed, "NODE_FAIL"), end(other, "NODE_FAIL"), end(late, "NODE_FAIL"), func() billing.RunEnd { e := end(cancelled, "CANCELLED"); e.Nodes = []string{"gpu-b"}; return e }()}}
	now := func() time.Time { return time.Unix(asOf+3600, 0) }
	job := &credit.Job{Source: src, Ledger: CreditWriter{Cluster: cluster, Ledger: l, Now: now}, Now: now,
		Policy: credit.Policy{Enabled: true, KillWindow: 2 * time.Minute}}
	for i, wantNew := range []int{1, 0, 0} {
		rep, err := job.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Written) != wantNew || rep.Computed != 1 || rep.Runs != 3 {
			t.Fatalf("run %d: %d written, %d computed of %d runs; want %d, 1 of 3 (the late run is not ingested, the CANCELLED one no drain explains)", i, len(rep.Written), rep.Computed, rep.Runs, wantNew)
		}
	}
	got := ledgertest.AllCredits(t, l, cluster, meter.PeriodOfUnix(asOf))
	if len(got) != 1 {
		t.Fatalf("credits %+v, want one", got)
	}
	c := got[0]
	if c.Amount != money.New(-want.Units(), want.Currency()) || c.EventID != 77 || c.Kind != "node-fail" || c.Tenant != "Acme" || c.JobID != 10 ||
		c.Period != ledgertest.P("2026-11") || c.Start != failed.Start || c.End != failed.End {
		t.Errorf("credit %+v, want %s for job 10 linked to event 77", c, want)
	}
	after, err := b.Summary(ctx, meter.PeriodOfUnix(asOf), "")
	if err != nil {
		t.Fatal(err)
	}
	if diff, _ := before.Amount.Sub(after.Amount); diff != want {
		t.Errorf("the period's total dropped by %s, want %s", diff, want)
	}
}

type placements []BookedPlacement

func (p placements) list(_ context.Context, from, to time.Time) ([]BookedPlacement, error) {
	var out []BookedPlacement
	for _, b := range p {
		if b.Start.Before(to) && b.End.After(from) {
			out = append(out, b)
		}
	}
	return out, nil
}

// TestBookingLostCreditOverTheLedger: booked GPU-hours lost while
// gpubridge held the booked node are credited at the booked rate the
// booking was charged, per period with that period's card (a closed
// October with its stored card, an open November with the current one);
// a whole-node booking of a MIG node gets one credit per profile; a
// booking of no tenant, or of a type without a booked rate, gets none; a
// rerun adds nothing.
func TestBookingLostCreditOverTheLedger(t *testing.T) {
	ctx := context.Background()
	_, l, cards := books(t)
	price := func(s string) pricing.Price { return mustPrice(t, s) }
	day, _ := pricing.ParseDate("2020-01-01")
	card := ledgertest.Card(t)
	card.Rates = append(card.Rates, pricing.Rate{Type: "h100", Tier: meter.Booked, PerGPUHour: price("4.00"), From: day},
		pricing.Rate{Type: "3g.40gb", Tier: meter.Booked, PerGPUHour: price("1.75"), From: day})
	card.Types = append(card.Types, pricing.GPUType{Name: "3g.40gb", Parent: "h100"})
	if err := cards.Save(ctx, card, "t", time.Now()); err != nil {
		t.Fatal(err)
	}
	octCard := card
	octCard.Rates = slices.Clone(card.Rates)
	octCard.Rates[2].PerGPUHour = price("6.00")
	if err := l.MarkClosed(ctx, ledger.PeriodRecord{Cluster: cluster, Period: ledgertest.P("2026-10"), ClosedAt: time.Unix(ledgertest.TS("2026-11-01 00:00:00"), 0), ClosedBy: "t",
		Amount: money.Zero(card.Unit()), Currency: "EUR", Snapshot: ledger.Snapshot{Card: octCard}}); err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time { return time.Unix(ledgertest.TS(s), 0) }
	ps := placements{
		{ID: 5, Account: "acme", Node: "gpu-a", Type: "h100", GPUs: 2, Start: at("2026-10-31 22:00:00"), End: at("2026-11-01 03:00:00")},
		{ID: 6, Account: "acme", Node: "gpu-b", Type: "3g.40gb", GPUs: 2, Start: at("2026-11-10 00:00:00"), End: at("2026-11-10 06:00:00")},
		{ID: 6, Account: "acme", Node: "gpu-b", Type: "1g.10gb", GPUs: 7, Start: at("2026-11-10 00:00:00"), End: at("2026-11-10 06:00:00")}, // priced from its parent
		{ID: 8, Account: "acme", Node: "gpu-b", Type: "a100", GPUs: 1, Start: at("2026-11-10 00:00:00"), End: at("2026-11-10 06:00:00")},    // no booked rate: none
		{ID: 7, Account: "nobody", Node: "gpu-a", Type: "h100", GPUs: 4, Start: at("2026-10-31 22:00:00"), End: at("2026-11-01 03:00:00")},  // no tenant
	}
	evs := events{
		{ID: 80, Node: "gpu-a", At: at("2026-10-31 23:00:00"), From: health.Serving, To: health.Drained, Reason: "xid failed", Fatal: true},
		{ID: 81, Node: "gpu-a", At: at("2026-11-01 01:30:00"), From: health.Drained, To: health.Serving, Reason: "requalified"},
		{ID: 90, Node: "gpu-b", At: at("2026-11-10 05:00:00"), From: health.Serving, To: health.Drained, Reason: "dcgm failed"},
	}
	src := CreditSource{Cluster: cluster, Ledger: l, Cards: cards, Labels: func(ctx context.Context) (ledger.Labeler, error) { return billing.TenantLabels(ctx, names{"Acme"}) },
		Health: evs, Ends: ends{}, Booked: placements(ps).list}
	asOf := ledgertest.TS("2026-11-20 00:00:00")
	now := func() time.Time { return time.Unix(asOf, 0) }
	job := &credit.Job{Source: src, Ledger: CreditWriter{Cluster: cluster, Ledger: l, Now: now}, Now: now, Lookback: 30 * 24 * time.Hour,
		Policy: credit.Policy{Enabled: true, KillWindow: 2 * time.Minute}}
	for i, wantNew := range []int{3, 0} {
		rep, err := job.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Written) != wantNew || rep.Computed != 3 {
			t.Fatalf("run %d: %d written, %d computed; want %d of 3", i, len(rep.Written), rep.Computed, wantNew)
		}
	}
	got := ledgertest.AllCredits(t, l, cluster, meter.PeriodOfUnix(asOf))
	slices.SortFunc(got, func(a, b ledger.Credit) int { return strings.Compare(a.Key, b.Key) })
	// Independent recomputation. Booking 5: 2 GPUs, October 23:00-24:00 at
	// 6.00 (12.00) and November 00:00-01:30 at 4.00 (12.00). Booking 6: 2
	// 3g.40gb from 05:00 to its end at 06:00 at 1.75 (3.50), and its 7
	// 1g.10gb at h100's 4.00 x 1/7 (4.00).
	want := []struct {
		key    string
		amount int64
		secs   int64
	}{
		{"health-credit:booking:5:event:80:h100", -2400, 2 * 9000},
		{"health-credit:booking:6:event:90:1g.10gb", -400, 7 * 3600},
		{"health-credit:booking:6:event:90:3g.40gb", -350, 2 * 3600},
	}
	if len(got) != len(want) {
		t.Fatalf("credits %+v; want %d", got, len(want))
	}
	for i, w := range want {
		c := got[i]
		if c.Key != w.key || c.Amount != money.New(w.amount, card.Unit()) || c.Kind != string(credit.BookingLost) || c.Tenant != "Acme" || c.Account != "acme" || c.GPUSeconds != w.secs {
			t.Errorf("credit %d: %+v; want key %s, %d cents, %d GPU-seconds, tenant Acme", i, c, w.key, w.amount, w.secs)
		}
	}
}

// TestBookedPriceAtTheChargesRateDate: a placement that starts after its
// booking (a part after a move) is priced at the booked rate of the
// booking's start, as its charge line is, not at a rate that began since.
func TestBookedPriceAtTheChargesRateDate(t *testing.T) {
	price := func(s string) pricing.Price { return mustPrice(t, s) }
	old, _ := pricing.ParseDate("2020-01-01")
	mid, _ := pricing.ParseDate("2026-11-15")
	card := ledgertest.Card(t)
	card.Rates = append(card.Rates, pricing.Rate{Type: "h100", Tier: meter.Booked, PerGPUHour: price("4.00"), From: old},
		pricing.Rate{Type: "h100", Tier: meter.Booked, PerGPUHour: price("5.00"), From: mid})
	at := func(s string) time.Time { return time.Unix(ledgertest.TS(s), 0) }
	cards := map[meter.Period]pricing.Card{ledgertest.P("2026-11"): card}
	for _, c := range []struct {
		rateFrom time.Time
		want     int64
	}{{at("2026-11-10 00:00:00"), 400}, {time.Time{}, 500}} {
		p := BookedPlacement{ID: 1, Type: "h100", GPUs: 1, Start: at("2026-11-16 00:00:00"), End: at("2026-11-16 01:00:00"), RateFrom: c.rateFrom}
		got, err := bookedPrice(p, cards)(p.Start, p.End)
		if err != nil {
			t.Fatal(err)
		}
		if got != money.New(c.want, card.Unit()) {
			t.Errorf("RateFrom %v: %v; want %d cents", c.rateFrom, got, c.want)
		}
	}
}

func mustPrice(t *testing.T, s string) pricing.Price {
	t.Helper()
	p, err := pricing.ParsePrice(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
