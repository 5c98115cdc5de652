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

// TestUsageViews: a note per period without use (not with --json); the
// utilization table, after its heading, only in aligned text without
// format= or where, and only when a period has bookings.
func TestUsageViews(t *testing.T) {
	eur := money.Currency{Code: "EUR", Minor: 2}
	nov, _ := meter.ParsePeriod("2026-11")
	booked := Summary{Meta: Meta{Period: nov, Card: pricing.Card{Currency: "EUR"}}, Rows: []Row{
		{Key: Key{Account: "acme", Type: "h100", Tier: meter.Booked, Kind: meter.KindBooking, Usage: nov, Booking: 6}, GPUSeconds: 300, Lines: 1, Amount: money.New(300, eur)},
	}}
	empty := Summary{Meta: Meta{Period: nov.Next()}}
	cases := map[string]struct {
		sums    []Summary
		o       table.Options
		notes   int
		heading bool
	}{
		"text":        {sums: []Summary{booked, empty}, notes: 1, heading: true},
		"json":        {sums: []Summary{booked, empty}, o: table.Options{JSON: true}},
		"-P":          {sums: []Summary{booked}, o: table.Options{Parsable: true}},
		"where":       {sums: []Summary{booked}, o: table.Options{Where: map[string]string{"tier": "booked"}}},
		"no bookings": {sums: []Summary{empty}, notes: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			notes, usage, heading, util := UsageViews(tc.sums, tc.o)
			if len(notes) != tc.notes || (heading != "") != tc.heading || len(usage.Header) == 0 {
				t.Errorf("notes %q, heading %q", notes, heading)
			}
			if tc.heading && len(util.Rows) != 1 {
				t.Errorf("utilization rows %v", util.Rows)
			}
		})
	}
}
