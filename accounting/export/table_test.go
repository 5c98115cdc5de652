package export

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/internal/money"
	"github.com/gpubridge/gpubridge/internal/table"
)

// TestUsageTable: rows per period, a total per tenant and per period when
// asked, "no rate" and "+ unpriced" where a type has no rate.
func TestUsageTable(t *testing.T) {
	eur := money.Currency{Code: "EUR", Minor: 2}
	rate, _ := pricing.ParsePrice("2.10")
	oct, _ := meter.ParsePeriod("2026-10")
	nov := oct.Next()
	sum := func(p meter.Period, closed bool, rows ...Row) Summary {
		s := Summary{Meta: Meta{Period: p, Closed: closed, Card: pricing.Card{Currency: "EUR"}}, Rows: rows}
		for _, r := range rows {
			s.GPUSeconds += r.GPUSeconds
			s.Amount, _ = s.Amount.Add(r.Amount)
		}
		return s
	}
	row := func(p meter.Period, typ string, r pricing.Price, sec, cents int64) Row {
		return Row{Key: Key{Tenant: "acme", Account: "acme", Type: typ, Tier: meter.Reserved, Kind: meter.KindUsage, Usage: p, Rate: r},
			HasTenant: true, GPUSeconds: sec, Lines: 1, Amount: money.New(cents, eur)}
	}
	sums := []Summary{
		sum(oct, true, row(oct, "h100", rate, 3600, 210)),
		sum(nov, false, row(nov, "h100", rate, 1800, 105), row(nov, "a100", -1, 60, 0)),
	}
	var b bytes.Buffer
	if err := table.Write(&b, table.Options{Parsable: true, NoHeader: true}, UsageTable(sums, true)); err != nil {
		t.Fatal(err)
	}
	want := `2026-10|closed|acme|acme|h100|reserved|usage|2026-10|1.000000|3600|2.10|2.10|EUR|
2026-10|closed|acme|acme|*|*|total||1.000000|3600||2.10|EUR|
2026-10|closed|*|*|*|*|total||1.000000|3600||2.10|EUR|
2026-11|open|acme|acme|h100|reserved|usage|2026-11|0.500000|1800|2.10|1.05|EUR|
2026-11|open|acme|acme|a100|reserved|usage|2026-11|0.016667|60|no rate|-|EUR|
2026-11|open|acme|acme|*|*|total||0.516667|1860||1.05 + unpriced|EUR|
2026-11|open|*|*|*|*|total||0.516667|1860||1.05 + unpriced|EUR|
`
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	b.Reset()
	if err := table.Write(&b, table.Options{JSON: true, Format: []string{"gpuType", "gpuSeconds", "rate", "amount"}}, UsageTable(sums[1:], false)); err != nil {
		t.Fatal(err)
	}
	wantJSON := `[
  {
    "gpuType": "h100",
    "gpuSeconds": 1800,
    "rate": "2.10",
    "amount": "1.05"
  },
  {
    "gpuType": "a100",
    "gpuSeconds": 60,
    "rate": null,
    "amount": null
  }
]
`
	if d := cmp.Diff(wantJSON, b.String()); d != "" {
		t.Errorf("--json (-want +got)\n%s", d)
	}
}
