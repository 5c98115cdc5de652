package pricing

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

func TestSkuIdentity(t *testing.T) {
	c, err := ParseYAML([]byte(`
version: 1
currency: EUR
types:
  - {name: 1g.10gb, parent: h100}
  - {name: a30-1g, parent: a30, slices: 1, parentSlices: 4}
rates:
  - {type: h100, perGPUHour: "2.10", from: 2026-01-01}
  - {type: a30, perGPUHour: "1.00", from: 2026-01-01}
  - {type: 2g.20gb, perGPUHour: "0.50", from: 2026-01-01}
`))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		typ                 string
		meter, details, sku string
	}{
		"whole GPU":           {"h100", "GPU Usage", `{"GpuCount":1,"x_GpuType":"h100","x_Tier":"ondemand"}`, "gpu-h100-ondemand"},
		"declared MIG":        {"1g.10gb", "MIG Slice Usage", `{"x_GpuType":"1g.10gb","x_MigParent":"h100","x_MigParentSlices":7,"x_MigSlices":1,"x_Tier":"ondemand"}`, "gpu-1g.10gb-ondemand"},
		"MIG of four slices":  {"a30-1g", "MIG Slice Usage", `{"x_GpuType":"a30-1g","x_MigParent":"a30","x_MigParentSlices":4,"x_MigSlices":1,"x_Tier":"ondemand"}`, "gpu-a30-1g-ondemand"},
		"undeclared MIG name": {"2g.20gb", "MIG Slice Usage", `{"x_GpuType":"2g.20gb","x_MigSlices":2,"x_Tier":"ondemand"}`, "gpu-2g.20gb-ondemand"},
		"untyped":             {"gpu", "GPU Usage", `{"GpuCount":1,"x_GpuType":"gpu","x_Tier":"ondemand"}`, "gpu-gpu-ondemand"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := [3]string{c.SkuMeter(tc.typ), c.SkuPriceDetails(tc.typ, meter.OnDemand), SkuPriceID(tc.typ, meter.OnDemand)}
			if d := cmp.Diff([3]string{tc.meter, tc.details, tc.sku}, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
			if SkuID(tc.typ) != "gpu-"+tc.typ {
				t.Errorf("SkuID %s", SkuID(tc.typ))
			}
		})
	}
}

// TestPriceList: every quote the card gives on any day is the price list's
// latest point for its SkuPriceId on that day.
func TestPriceList(t *testing.T) {
	c, err := ParseYAML([]byte(`
version: 1
currency: EUR
types:
  - {name: 1g.10gb, parent: h100}
  - {name: 3g.40gb, parent: h100}
rates:
  - {type: h100, perGPUHour: "2.10", from: 2026-01-01}
  - {type: h100, tier: ondemand, perGPUHour: "3.50", from: 2026-01-01}
  - {type: h100, tier: reserved, perGPUHour: "2.00", from: 2026-11-15}
  - {type: h100, perGPUHour: "2.00", from: 2026-12-01}
  - {type: 3g.40gb, tier: ondemand, perGPUHour: "1.00", from: 2026-06-01}
`))
	if err != nil {
		t.Fatal(err)
	}
	list := c.PriceList()
	want := []string{
		"gpu-1g.10gb-ondemand 2026-01-01 0.50 h100 x 1/7", "gpu-1g.10gb-ondemand 2026-12-01 0.285714286 h100 x 1/7",
		"gpu-1g.10gb-reserved 2026-01-01 0.30 h100 x 1/7", "gpu-1g.10gb-reserved 2026-11-15 0.285714286 h100 x 1/7",
		"gpu-3g.40gb-ondemand 2026-01-01 1.50 h100 x 3/7", "gpu-3g.40gb-ondemand 2026-06-01 1.00 3g.40gb",
		"gpu-3g.40gb-reserved 2026-01-01 0.90 h100 x 3/7", "gpu-3g.40gb-reserved 2026-11-15 0.857142857 h100 x 3/7",
		"gpu-h100-ondemand 2026-01-01 3.50 h100", "gpu-h100-ondemand 2026-12-01 2.00 h100",
		"gpu-h100-reserved 2026-01-01 2.10 h100", "gpu-h100-reserved 2026-11-15 2.00 h100",
	}
	var got []string
	for _, p := range list {
		got = append(got, p.SkuPriceID+" "+p.From.String()+" "+p.UnitPrice.String()+" "+p.Basis)
		if p.SkuID != SkuID(p.Type) || p.SkuPriceID != SkuPriceID(p.Type, p.Tier) {
			t.Errorf("point %+v: ids", p)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	for day := mustDate("2026-01-01").Unix(); day < mustDate("2027-02-01").Unix(); day += 86400 {
		for _, typ := range []string{"h100", "1g.10gb", "3g.40gb"} {
			for _, tier := range meter.Tiers {
				q, err := c.Quote(typ, tier, day)
				if err != nil {
					t.Fatal(err)
				}
				var at PricePoint
				for _, p := range list {
					if p.SkuPriceID == SkuPriceID(typ, tier) && p.From.Unix() <= day {
						at = p
					}
				}
				if at.UnitPrice != q.UnitPrice() || at.Basis != q.Basis {
					t.Fatalf("%s %s on day %d: price list %v, quote %v", typ, tier, day, at, q)
				}
			}
		}
	}
}

func TestPriceTimes(t *testing.T) {
	p := func(s string) Price {
		v, err := ParsePrice(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := map[string]struct {
		price Price
		q     int64
		scale int
		minor int
		want  string
	}{
		"issue's example":   {p("3.50"), 42500, 6, 2, "0.14875"},
		"whole":             {p("2.10"), 2_000_000, 6, 2, "4.20"},
		"yen":               {p("300"), 1_500_000, 6, 0, "450"},
		"negative quantity": {p("2.10"), -500_000, 6, 2, "-1.05"},
		"zero":              {p("2.10"), 0, 6, 2, "0.00"},
		"MIG price":         {p("0.285714286"), 1, 6, 3, "0.000000285714286"},
		"beyond 64 bits":    {MaxPrice, math.MaxInt64, 6, 2, "9223372036854775807000.00"},
		"min int":           {p("1"), math.MinInt64, 0, 0, "-9223372036854775808"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.price.Times(tc.q, tc.scale, tc.minor); got != tc.want {
				t.Errorf("%s × %d/10^%d = %s, want %s", tc.price, tc.q, tc.scale, got, tc.want)
			}
		})
	}
}
