package spend

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/bridge/burst"
)

const card = `
version: 1
currency: EUR
types:
  - name: 1g.10gb
    parent: h100
rates:
  - type: h100
    tier: reserved
    perGPUHour: "2.10"
    from: 2026-01-01
  - type: h100
    tier: ondemand
    perGPUHour: "3.50"
    from: 2026-01-01
`

var rules = meter.TierRules{OnDemandPartition: "ondemand", OnDemandQOS: "ondemand"}

func run(id uint32, account, part, qos string, start, end time.Time, typ string, n int64) meter.MeasuredRun {
	r := meter.Run{Key: meter.RunKey{Cluster: "c", JobID: id, Submit: start.Unix() - 10}, Account: account, User: "alice",
		Partition: part, QOS: qos, Start: start.Unix(), End: end.Unix(), GPUs: []meter.Alloc{{Type: typ, Count: n}}}
	return meter.MeasuredRun{Run: r, Usages: meter.Split(r, end.Unix()+1, rules)}
}

func TestSpendAndRates(t *testing.T) {
	ctx := context.Background()
	m := ledger.NewMemory()
	cards := ratecard.NewMemory()
	c, err := pricing.ParseYAML([]byte(card))
	if err != nil {
		t.Fatal(err)
	}
	if err := cards.Save(ctx, c, "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	runs := []meter.MeasuredRun{
		run(1, "acme", "ondemand", "ondemand", t0, t0.Add(time.Hour), "h100", 2),                                     // 2 GPU-h on demand: 7.00
		run(2, "acme", "pool", "acme", t0, t0.Add(time.Hour), "h100", 2),                                             // reserved: not spend
		run(3, "acme", "ondemand", "ondemand", t0, t0.Add(7*time.Hour), "1g.10gb", 1),                                // 7 slice-h = 1 GPU-h: 3.50
		run(4, "beta", "ondemand", "ondemand", t0, t0.Add(30*time.Minute), "h100", 1),                                // 1.75
		run(5, "acme", "ondemand", "ondemand", t0.AddDate(0, -1, 0), t0.AddDate(0, -1, 0).Add(time.Hour), "h100", 1), // last month
	}
	if _, err := m.ApplyBatch(ctx, "c", t0.Add(8*time.Hour).Unix(), meter.Batch{Source: "test", Runs: runs, From: 0, Through: t0.Add(8 * time.Hour).Unix()}); err != nil {
		t.Fatal(err)
	}
	s := &Source{Ledger: m, Cards: cards, Cluster: "c"}
	got, err := s.OnDemandSpend(ctx, burst.MonthStart(t0), t0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int64{"acme": 1050, "beta": 175}, got); diff != "" {
		t.Errorf("spend (-want +got)\n%s", diff)
	}
	s.Accounts = func(context.Context) ([]string, error) { return []string{"beta"}, nil }
	got, err = s.OnDemandSpend(ctx, burst.MonthStart(t0), t0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int64{"beta": 175}, got); diff != "" {
		t.Errorf("spend of beta (-want +got)\n%s", diff)
	}

	rates, err := s.OnDemandRates(ctx, t0)
	if err != nil {
		t.Fatal(err)
	}
	want := burst.Rates{PerGPUHour: map[string]pricing.Price{"h100": 3_500_000_000, "1g.10gb": 500_000_000}, Currency: "EUR", Minor: 2}
	if diff := cmp.Diff(want, rates); diff != "" {
		t.Errorf("rates (-want +got)\n%s", diff)
	}
}

func TestNoRateCard(t *testing.T) {
	s := &Source{Ledger: ledger.NewMemory(), Cards: ratecard.NewMemory(), Cluster: "c"}
	rates, err := s.OnDemandRates(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(rates.PerGPUHour) != 0 {
		t.Errorf("rates without a card: %v", rates)
	}
}

// TestCardRates: a rate card file prices exactly as the same card stored.
func TestCardRates(t *testing.T) {
	ctx := context.Background()
	c, err := pricing.ParseYAML([]byte(card))
	if err != nil {
		t.Fatal(err)
	}
	cards := ratecard.NewMemory()
	if err := cards.Save(ctx, c, "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	stored, err := (&Source{Ledger: ledger.NewMemory(), Cards: cards, Cluster: "c"}).OnDemandRates(ctx, at)
	if err != nil {
		t.Fatal(err)
	}
	file, err := CardRates{Card: c}.OnDemandRates(ctx, at)
	if err != nil {
		t.Fatal(err)
	}
	want := burst.Rates{PerGPUHour: map[string]pricing.Price{"h100": 3_500_000_000, "1g.10gb": 500_000_000}, Currency: "EUR", Minor: 2}
	if diff := cmp.Diff(want, file); diff != "" {
		t.Errorf("card rates (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff(stored, file); diff != "" {
		t.Errorf("stored card vs card file (-stored +file)\n%s", diff)
	}
	// Before the card's rates start there is no rate: missing, never zero.
	early, _ := CardRates{Card: c}.OnDemandRates(ctx, time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC))
	if len(early.PerGPUHour) != 0 {
		t.Errorf("rates before the card's from date: %v", early.PerGPUHour)
	}
}
