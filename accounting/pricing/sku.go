package pricing

import (
	"cmp"
	"encoding/json"
	"slices"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

// The rate card is the price list finance looks prices up in. A GPU type
// is a SKU (what is sold: an hour of an H100, an hour of a 1g.10gb slice);
// a SKU in a tier is a SKU price (what one GPU-hour of it costs, which may
// change over time). FOCUS 1.2 asks that a SKU price's identifier carry no
// price, currency or date, so that it stays the same over time and across
// billing accounts: a price change keeps the SkuPriceId and changes the
// ListUnitPrice.

// SkuID is the FOCUS SkuId of a GPU type: "gpu-h100", "gpu-1g.10gb". It is
// the same in both tiers (a tier changes the price, not what is sold).
func SkuID(typ string) string { return "gpu-" + typ }

// SkuPriceID is the FOCUS SkuPriceId of a GPU type in a tier:
// "gpu-h100-reserved". It has one parent SkuID and holds no price, currency
// or date.
func SkuPriceID(typ string, tier meter.Tier) string { return SkuID(typ) + "-" + string(tier) }

// SkuMeter names what a GPU type's SKU measures (FOCUS SkuMeter): "GPU
// Usage" for whole GPUs, "MIG Slice Usage" for MIG profiles.
func (c Card) SkuMeter(typ string) string {
	if _, mig := c.MIG(typ); mig {
		return "MIG Slice Usage"
	}
	return "GPU Usage"
}

// MIG returns the MIG declaration of typ: the card's GPUType with a
// parent (Slices and ParentSlices filled in), or, for an undeclared
// profile name, its slices read from the name (no parent). mig is false
// for a whole GPU.
func (c Card) MIG(typ string) (t GPUType, mig bool) {
	for _, d := range c.Types {
		if d.Name == typ && d.Parent != "" {
			d.Slices = cmp.Or(d.Slices, SlicesFromName(d.Name))
			d.ParentSlices = cmp.Or(d.ParentSlices, DefaultParentSlices)
			return d, true
		}
	}
	if s := SlicesFromName(typ); s > 0 {
		return GPUType{Name: typ, Slices: s}, true
	}
	return GPUType{}, false
}

// SkuPriceDetails returns the FOCUS SkuPriceDetails of a GPU type in a
// tier, a JSON object with sorted keys. Per pricing unit (one GPU-hour) a
// whole GPU is GpuCount 1 (the FOCUS-defined property); a MIG slice is not
// a whole GPU, so it carries its share as provider properties instead:
// x_MigSlices of x_MigParentSlices compute slices of an x_MigParent GPU
// (the parent and its slices only when the card declares the parent).
// x_GpuType and x_Tier repeat the type and tier.
func (c Card) SkuPriceDetails(typ string, tier meter.Tier) string {
	d := map[string]any{"x_GpuType": typ, "x_Tier": string(tier)}
	if t, mig := c.MIG(typ); mig {
		d["x_MigSlices"] = t.Slices
		if t.Parent != "" {
			d["x_MigParent"] = t.Parent
			d["x_MigParentSlices"] = t.ParentSlices
		}
	} else {
		d["GpuCount"] = 1
	}
	b, _ := json.Marshal(d) // strings and ints only: cannot fail
	return string(b)
}

// PricePoint is one entry of the price list: from From on (until the next
// point of the same SkuPriceID), one GPU-hour of Type in Tier costs
// UnitPrice (Quote.UnitPrice: the rate × weight, rounded to 9 digits).
type PricePoint struct {
	SkuID, SkuPriceID string
	Type              string
	Tier              meter.Tier
	From              Date
	UnitPrice         Price
	Basis             string
}

// PriceList lists every price the card gives, per SKU price and date: for
// each GPU type with a rate or a declared parent and each tier, the quote
// on every date a rate of the type or its parent starts, keeping the dates
// on which the price or its basis changes. A lookup of a line's SkuPriceID
// at its rate date (the latest point not after it) gives the line's
// ListUnitPrice. Sorted by SkuPriceID, then From.
func (c Card) PriceList() []PricePoint {
	own := map[string][]Date{} // type -> the From dates of its own rates
	for _, r := range c.Rates {
		own[r.Type] = append(own[r.Type], r.From)
	}
	types := map[string][]Date{} // type -> the dates that can change its price
	for typ, ds := range own {
		types[typ] = append(types[typ], ds...)
	}
	for _, t := range c.Types {
		if t.Parent != "" {
			types[t.Name] = append(types[t.Name], own[t.Parent]...)
		}
	}
	var out []PricePoint
	for typ, ds := range types {
		slices.SortFunc(ds, func(a, b Date) int { return cmp.Compare(a.Unix(), b.Unix()) })
		ds = slices.CompactFunc(ds, func(a, b Date) bool { return a.Unix() == b.Unix() })
		for _, tier := range meter.AllTiers {
			var last PricePoint
			for _, d := range ds {
				q, err := c.Quote(typ, tier, d.Unix())
				if err != nil {
					continue
				}
				p := PricePoint{SkuID: SkuID(typ), SkuPriceID: SkuPriceID(typ, tier), Type: typ, Tier: tier, From: d,
					UnitPrice: q.UnitPrice(), Basis: q.Basis}
				if last.SkuPriceID != "" && last.UnitPrice == p.UnitPrice && last.Basis == p.Basis {
					continue
				}
				out = append(out, p)
				last = p
			}
		}
	}
	slices.SortFunc(out, func(a, b PricePoint) int {
		return cmp.Or(cmp.Compare(a.SkuPriceID, b.SkuPriceID), cmp.Compare(a.From.Unix(), b.From.Unix()))
	})
	return out
}
