package ratecard

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func price(t *testing.T, s string) pricing.Price {
	t.Helper()
	p, err := pricing.ParsePrice(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func date(t *testing.T, s string) pricing.Date {
	t.Helper()
	d, err := pricing.ParseDate(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestEdits(t *testing.T) {
	ctx := context.Background()
	st := NewMemory()
	if _, err := Get(ctx, st); !errors.Is(err, ErrNoCard) {
		t.Fatalf("Get of an empty store: %v", err)
	}
	h100 := pricing.Rate{Type: "h100", Tier: meter.Reserved, PerGPUHour: price(t, "2.10"), From: date(t, "2026-01-01")}
	if _, err := AddRate(ctx, st, h100, "", "test", now); !IsInput(err) || !strings.Contains(err.Error(), "give currency=") {
		t.Errorf("first rate without a currency: %v", err)
	}
	if _, err := AddGPUType(ctx, st, pricing.GPUType{Name: "1g.10gb", Parent: "h100"}, "test", now); !errors.Is(err, ErrNoCard) {
		t.Errorf("gputype before a card: %v", err)
	}
	if _, err := AddRate(ctx, st, h100, "JPY", "test", now); err != nil {
		t.Fatal(err)
	}
	if _, err := AddRate(ctx, st, h100, "EUR", "test", now); !IsInput(err) || !strings.Contains(err.Error(), "the rate card is in JPY") {
		t.Errorf("another currency: %v", err)
	}
	if _, err := AddGPUType(ctx, st, pricing.GPUType{Name: "1g.10gb", Parent: "h100"}, "test", now); err != nil {
		t.Fatal(err)
	}
	card, err := Get(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{
		{"h100", "reserved", "2.10", "JPY", "2026-01-01", "own rate", "gpu-h100-reserved"},
		{"1g.10gb", "reserved", "0.30", "JPY", "2026-01-01", "h100 x 1/7", "gpu-1g.10gb-reserved"},
		{"1g.10gb", "ondemand", "no rate", "JPY", "", "parent h100 has no rate today", ""},
	}
	if d := cmp.Diff(want, Rows(card, now)); d != "" {
		t.Errorf("Rows (-want +got)\n%s", d)
	}
	wantList := `# FOCUS price list: a row's ListUnitPrice is its SkuPriceId's price per GPU-hour (JPY)
# on its x_RateFrom date.
#  SkuPriceId            SkuId        From        PerGPUHour  Basis
#  gpu-1g.10gb-reserved  gpu-1g.10gb  2026-01-01  0.30        h100 x 1/7
#  gpu-h100-reserved     gpu-h100     2026-01-01  2.10        h100
`
	if d := cmp.Diff(wantList, PriceListComment(card)); d != "" {
		t.Errorf("PriceListComment (-want +got)\n%s", d)
	}
	// show ratecard prints both; it loads back as the same card.
	y, err := card.YAML()
	if err != nil {
		t.Fatal(err)
	}
	back, err := pricing.ParseYAML(append(y, PriceListComment(card)...))
	if err != nil || !cmp.Equal(back, card, cmp.AllowUnexported(pricing.Date{})) {
		t.Errorf("show ratecard's output does not load back as the card: %v", err)
	}
	if err := DeleteRate(ctx, st, "h100", meter.OnDemand, date(t, "2026-01-01"), "test", now, nil); err == nil || !strings.Contains(err.Error(), "no rate for type h100") {
		t.Errorf("delete of a missing rate: %v", err)
	}
	no := errors.New("no")
	if err := DeleteRate(ctx, st, "h100", meter.Reserved, date(t, "2026-01-01"), "test", now, func() error { return no }); !errors.Is(err, no) {
		t.Errorf("declined delete: %v", err)
	}
	if err := DeleteRate(ctx, st, "h100", meter.Reserved, date(t, "2026-01-01"), "test", now, nil); err != nil {
		t.Fatal(err)
	}
	if c, _ := Get(ctx, st); len(c.Rates) != 0 {
		t.Errorf("rates after delete: %v", c.Rates)
	}
}

func TestLoad(t *testing.T) {
	ctx := context.Background()
	st := NewMemory()
	y := []byte("version: 1\ncurrency: KWD\nrates:\n  - {type: h100, perGPUHour: \"0.650\", from: 2026-01-01}\n")
	asked := 0
	confirm := func(c pricing.Card) error { asked++; return nil }
	if c, changed, err := Load(ctx, st, y, "test", now, confirm); err != nil || !changed || c.Minor() != 3 || asked != 1 {
		t.Fatalf("first load: %v %v %v (asked %d)", c, changed, err, asked)
	}
	if _, changed, err := Load(ctx, st, y, "test", now, confirm); err != nil || changed || asked != 1 {
		t.Errorf("same card again: changed %v, %v (asked %d)", changed, err, asked)
	}
	bad := []byte("version: 1\ncurrency: KWD\nrates:\n  - {type: h100, perGPUHour: 0.123456789012345678901, from: 2026-01-01}\n")
	if _, _, err := Load(ctx, st, bad, "test", now, confirm); !IsInput(err) || !strings.Contains(err.Error(), "quote it") {
		t.Errorf("a price YAML would round: %v", err)
	}
}

func TestReadFileRefusesLargeFiles(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, pricing.MaxCardBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(big); !IsInput(err) || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
		t.Errorf("large file: %v", err)
	}
	ok := filepath.Join(dir, "ok.yaml")
	if err := os.WriteFile(ok, []byte("version: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(ok); err != nil || string(b) != "version: 1\n" {
		t.Errorf("small file: %q, %v", b, err)
	}
}
