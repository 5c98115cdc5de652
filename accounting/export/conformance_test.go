package export

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/export/exporttest"
	"github.com/gpubridge/gpubridge/accounting/export/focuscheck"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/internal/golden"
)

var closedAt = time.Date(2026, 12, 2, 3, 0, 7, 123456000, time.UTC)

// scenarios are the months the conformance test exports: the fixture's
// November open (usage, a revision, an adjustment for October, an
// accrual, an account without a tenant), the same month closed (no
// accrual), and a closed month in a three-digit currency with MIG prices
// that do not end (2.00 / 7) and an adjustment.
func scenarios(t testing.TB) map[string]struct {
	meta  Meta
	lines []meter.Line
} {
	open := meta(t)
	open.Now = time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	closed := meta(t)
	closed.Closed, closed.ClosedAt = true, closedAt
	final := slices.DeleteFunc(fixture(), func(l meter.Line) bool { return !l.Final })
	kwd := closed
	c, err := pricing.ParseYAML([]byte(`
version: 1
currency: KWD
types:
  - {name: 1g.10gb, parent: h100}
  - {name: 3g.40gb, parent: h100}
rates:
  - {type: h100, perGPUHour: "2.000", from: 2026-01-01}
  - {type: h100, tier: ondemand, perGPUHour: "3.125", from: 2026-11-10}
`))
	if err != nil {
		t.Fatal(err)
	}
	kwd.Card = c
	booked := closed
	if booked.Card, err = closed.Card.WithRate(pricing.Rate{Type: "h100", Tier: meter.Booked, PerGPUHour: 1_500_000_000, From: closed.Card.Rates[0].From}); err != nil {
		t.Fatal(err)
	}
	return map[string]struct {
		meta  Meta
		lines []meter.Line
	}{
		"open":       {open, fixture()},
		"closed":     {closed, final},
		"closed-kwd": {kwd, final},
		"bookings":   {booked, append(slices.Clone(final), bookingLines()...)},
	}
}

// TestFOCUSConformance checks the FOCUS exports (summary and detail=jobs)
// of an open month, a closed month and months with adjustments against
// the specification's rules (focuscheck), with their metadata, the price
// list lookup of every SkuPriceId and, once closed, the invoice total.
func TestFOCUSConformance(t *testing.T) {
	for name, sc := range scenarios(t) {
		for _, d := range []bool{false, true} {
			name := name + map[bool]string{false: "-summary", true: "-detail"}[d]
			t.Run(name, func(t *testing.T) {
				var b bytes.Buffer
				if err := Write(context.Background(), &b, sc.meta, source(sc.lines, 1), Options{Format: FOCUS, Detail: d}); err != nil {
					t.Fatal(err)
				}
				md, err := FOCUSMetadata(sc.meta)
				if err != nil {
					t.Fatal(err)
				}
				mb, err := MarshalMetadata(md)
				if err != nil {
					t.Fatal(err)
				}
				var inv map[string]string
				if sc.meta.Closed {
					s, err := Summarize(context.Background(), sc.meta, source(sc.lines, 1), false)
					if err != nil {
						t.Fatal(err)
					}
					inv = map[string]string{InvoiceID(sc.meta.Cluster, sc.meta.Period): s.Amount.String()}
				}
				exporttest.Conforms(t, name, b.Bytes(), exporttest.Options(sc.meta.Card, mb, inv))
			})
		}
	}
}

// TestConformanceCatchesBrokenRows: each rule the export relies on fails
// when the export's own output is broken in that way (the checks can
// fail).
func TestConformanceCatchesBrokenRows(t *testing.T) {
	sc := scenarios(t)["closed"]
	var b bytes.Buffer
	if err := Write(context.Background(), &b, sc.meta, source(sc.lines, 1), Options{Format: FOCUS, Detail: true}); err != nil {
		t.Fatal(err)
	}
	md, _ := FOCUSMetadata(sc.meta)
	mb, _ := MarshalMetadata(md)
	recs, err := csv.NewReader(bytes.NewReader(b.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	cases := map[string]struct {
		edit func(r []string)
		rule string
	}{
		"list cost rounded":   {func(r []string) { r[col["ListCost"]] = r[col["BilledCost"]] + "1" }, "listcost: ListUnitPrice × PricingQuantity = ListCost"},
		"contracted cost":     {func(r []string) { r[col["ContractedCost"]] = "0" }, "contractedcost: ContractedUnitPrice × PricingQuantity"},
		"price in SkuPriceId": {func(r []string) { r[col["SkuPriceId"]] += "-" + r[col["ListUnitPrice"]] }, "skupriceid: MUST remain consistent over time"},
		"date in SkuPriceId":  {func(r []string) { r[col["SkuPriceId"]] += "-2026-01-01" }, "skupriceid: MUST remain consistent over time"},
		"empty tag value":     {func(r []string) { r[col["Tags"]] = `{"gpubridge/tenant":""}` }, "null_handling: no empty strings"},
		"empty tag key":       {func(r []string) { r[col["Tags"]] = `{"":"x"}` }, "tags: provider-defined tag keys are prefixed"},
		"duplicate tag":       {func(r []string) { r[col["Tags"]] = `{"gpubridge/a":"x","gpubridge/a":"y"}` }, "key_value_format: Tags keys are unique"},
		"nested tag":          {func(r []string) { r[col["Tags"]] = `{"gpubridge/a":{"b":1}}` }, "key_value_format: Tags values are not objects"},
		"class on usage":      {func(r []string) { r[col["ChargeClass"]] = "Correction" }, "chargeclass: Correction is a correction to a previously invoiced"},
		"no class on old month": {func(r []string) {
			r[col["ChargePeriodEnd"]] = "2026-10-31T00:00:00Z"
			r[col["ChargePeriodStart"]] = "2026-10-30T00:00:00Z"
		}, "chargeclass: MUST NOT be null"},
		"date format":  {func(r []string) { r[col["ChargePeriodStart"]] = "2026-11-02 10:00:00" }, "datetime_format: ChargePeriodStart"},
		"period order": {func(r []string) { r[col["ChargePeriodEnd"]] = r[col["ChargePeriodStart"]] }, "chargeperiodstart: the inclusive start bound is before"},
		"plus sign":    {func(r []string) { r[col["BilledCost"]] = "+4.20" }, "numeric_format: BilledCost"},
		"null billed":  {func(r []string) { r[col["BilledCost"]] = "" }, "billedcost: MUST NOT be null"},
		"placeholder":  {func(r []string) { r[col["ResourceName"]] = "N/A" }, "null_handling: no placeholder values"},
		"category":     {func(r []string) { r[col["ChargeCategory"]] = "Use" }, "chargecategory: MUST be one of the allowed values"},
		"subcategory parent": {func(r []string) {
			r[col["ServiceSubcategory"]] = "Virtual Machines"
			r[col["ServiceCategory"]] = "Storage"
		}, "servicesubcategory: has one and only one parent"},
		"sku price details key": {func(r []string) { r[col["SkuPriceDetails"]] = `{"Tier":"reserved"}` }, "skupricedetails: a property key begins with x_"},
		"GpuCount type":         {func(r []string) { r[col["SkuPriceDetails"]] = `{"GpuCount":"1"}` }, "skupricedetails: a FOCUS-defined property's value has its type"},
		"null SkuPriceId":       {func(r []string) { r[col["SkuPriceId"]] = ""; r[col["SkuPriceDetails"]] = "" }, "skupriceid: MUST NOT be null"},
		"meter without sku":     {func(r []string) { r[col["SkuId"]] = "" }, "skumeter: MUST be null when SkuId is null"},
		"unit without quantity": {func(r []string) { r[col["PricingQuantity"]] = "" }, "pricingunit: null exactly when PricingQuantity is null"},
		"negative unit price":   {func(r []string) { r[col["ListUnitPrice"]] = "-2.10" }, "listunitprice: MUST be a non-negative decimal value"},
		"price list":            {func(r []string) { r[col["ListUnitPrice"]] = "2.11" }, "skupriceid: MUST support the lookup of the ListUnitPrice"},
		"scale":                 {func(r []string) { r[col["BilledCost"]] = "4.201" }, "numberscale: a value has at most NumberScale digits"},
		"invoice total":         {func(r []string) { r[col["BilledCost"]] = "4.21" }, "billedcost: the BilledCost of an InvoiceId sums to the invoice's payable amount"},
		"two SKUs":              {func(r []string) { r[col["SkuId"]] = "gpu-other" }, "skupriceid: MUST have one and only one parent SkuId"},
	}
	s, err := Summarize(context.Background(), sc.meta, source(sc.lines, 1), false)
	if err != nil {
		t.Fatal(err)
	}
	inv := map[string]string{InvoiceID(sc.meta.Cluster, sc.meta.Period): s.Amount.String()}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rows := make([][]string, len(recs))
			for i := range recs {
				rows[i] = slices.Clone(recs[i])
			}
			tc.edit(rows[1])
			var out bytes.Buffer
			w := csv.NewWriter(&out)
			w.WriteAll(rows)
			vs, err := focuscheck.Check(&out, exporttest.Options(sc.meta.Card, mb, inv))
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				if strings.HasPrefix(v.Rule, tc.rule) {
					return
				}
			}
			t.Errorf("no violation of %q; got %v", tc.rule, vs)
		})
	}
}

// TestConformanceCatchesBrokenHeader: column rules and metadata rules.
func TestConformanceCatchesBrokenHeader(t *testing.T) {
	sc := scenarios(t)["closed"]
	var b bytes.Buffer
	if err := Write(context.Background(), &b, sc.meta, source(sc.lines, 1), Options{Format: FOCUS}); err != nil {
		t.Fatal(err)
	}
	md, _ := FOCUSMetadata(sc.meta)
	mb, _ := MarshalMetadata(md)
	data := b.String()
	cases := map[string]struct {
		data, meta string
		rule       string
	}{
		"no x_ prefix":        {strings.Replace(data, "x_Tenant", "Tenant", 1), "", "column_handling: custom columns are prefixed with x_"},
		"missing mandatory":   {strings.Replace(data, "ListCost", "x_ListCost", 1), "", "listcost: MUST be present"},
		"missing SkuMeter":    {strings.Replace(data, "SkuMeter", "x_SkuMeter", 1), "", "skumeter: MUST be present when the provider publishes price lists"},
		"custom before FOCUS": {strings.Replace(data, "BilledCost", "x_BilledCost", 1), "", "column_handling: custom columns are listed after all FOCUS columns"},
		"no metadata":         {data, "-", "metadata: FOCUS Metadata SHOULD be provided"},
		"wrong version":       {data, strings.Replace(string(mb), `"FocusVersion": "1.2"`, `"FocusVersion": "1.0"`, 1), "focusversion: FocusVersion MUST match the version"},
		"null in metadata":    {data, strings.Replace(string(mb), `"DataGenerator": "gpubridge"`, `"DataGenerator": null`, 1), "data_generator: the Data Generator metadata MUST NOT contain null"},
		"schema mismatch":     {data, strings.Replace(string(mb), `"ColumnName": "x_User"`, `"ColumnName": "x_Person"`, 1), "schema: the schema metadata MUST match"},
		"no tag prefixes":     {data, strings.Replace(string(mb), `"ProviderTagPrefixes"`, `"x_Prefixes"`, 1), "providertagprefixes: ProviderTagPrefixes MUST be provided"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := exporttest.Options(sc.meta.Card, mb, nil)
			switch tc.meta {
			case "-":
				o.Metadata = nil
			case "":
			default:
				o.Metadata = []byte(tc.meta)
			}
			vs, err := focuscheck.Check(strings.NewReader(tc.data), o)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				if strings.HasPrefix(v.Rule, tc.rule) {
					return
				}
			}
			t.Errorf("no violation of %q; got %v", tc.rule, vs)
		})
	}
}

// TestConformanceFailsOnFOCUS10Export: the FOCUS export of the previous
// gpubridge (FOCUS 1.0 columns; testdata/focus-1.0/, the golden files of
// main before FOCUS 1.2) breaks the ListCost rule, among others.
func TestConformanceFailsOnFOCUS10Export(t *testing.T) {
	for _, f := range []string{"2026-11-focus.focus.csv", "2026-11-focus-detail.focus.csv"} {
		data, err := os.ReadFile(filepath.Join("testdata", "focus-1.0", f))
		if err != nil {
			t.Fatal(err)
		}
		vs, err := focuscheck.Check(bytes.NewReader(data), exporttest.Options(card(t), nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		rules := map[string]int{}
		for _, v := range focuscheck.Musts(vs) {
			rules[v.Rule]++
		}
		for _, want := range []string{
			"listcost: ListUnitPrice × PricingQuantity = ListCost (ChargeClass not Correction)",
			"skumeter: MUST be present when the provider publishes price lists",
			"skupriceid: MUST remain consistent over time (it holds no unit price, currency or effective date)",
		} {
			if rules[want] == 0 {
				t.Errorf("%s: no violation of %q; got %v", f, want, rules)
			}
		}
		t.Logf("%s: %d MUST violations: %v", f, len(focuscheck.Musts(vs)), rules)
	}
}

// TestSkuPriceIDStable: one SkuPriceId per type and tier, whatever the
// price, shared by the summary and the detail, with the same details, and
// found in the price list (`show ratecard`).
func TestSkuPriceIDStable(t *testing.T) {
	m := meta(t)
	m.Closed, m.ClosedAt = true, closedAt
	final := slices.DeleteFunc(fixture(), func(l meter.Line) bool { return !l.Final })
	ids := map[bool]map[string][2]string{}
	for _, d := range []bool{false, true} {
		var b bytes.Buffer
		if err := Write(context.Background(), &b, m, source(final, 1), Options{Format: FOCUS, Detail: d}); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, c := range recs[0] {
			col[c] = i
		}
		ids[d] = map[string][2]string{}
		prices := map[string]map[string]bool{}
		for _, r := range recs[1:] {
			id := r[col["SkuPriceId"]]
			ids[d][id] = [2]string{r[col["SkuId"]], r[col["SkuPriceDetails"]]}
			if prices[id] == nil {
				prices[id] = map[string]bool{}
			}
			prices[id][r[col["ListUnitPrice"]]] = true
		}
		// The reserved h100 changed price on 2026-11-15: one id, two prices.
		if !prices["gpu-h100-reserved"]["2.10"] || !prices["gpu-h100-reserved"]["2.00"] {
			t.Errorf("detail %v: gpu-h100-reserved prices %v, want 2.10 and 2.00", d, prices["gpu-h100-reserved"])
		}
	}
	if d := cmp.Diff(ids[false], ids[true]); d != "" {
		t.Errorf("summary and detail SKUs differ (-summary +detail)\n%s", d)
	}
	want := map[string][2]string{
		"gpu-h100-reserved":    {"gpu-h100", `{"GpuCount":1,"x_GpuType":"h100","x_Tier":"reserved"}`},
		"gpu-h100-ondemand":    {"gpu-h100", `{"GpuCount":1,"x_GpuType":"h100","x_Tier":"ondemand"}`},
		"gpu-1g.10gb-reserved": {"gpu-1g.10gb", `{"x_GpuType":"1g.10gb","x_MigParent":"h100","x_MigParentSlices":7,"x_MigSlices":1,"x_Tier":"reserved"}`},
		"gpu-3g.40gb-reserved": {"gpu-3g.40gb", `{"x_GpuType":"3g.40gb","x_MigParent":"h100","x_MigParentSlices":7,"x_MigSlices":3,"x_Tier":"reserved"}`},
	}
	if d := cmp.Diff(want, ids[false]); d != "" {
		t.Errorf("SKUs (-want +got)\n%s", d)
	}
}

// TestFOCUSMetadata: the metadata of a closed period is the same bytes
// whenever it is made (CreationDate is the close time); an open period's
// CreationDate is the export time; the SchemaId changes with the schema
// (here: the currency's minor digits) and only with it.
func TestFOCUSMetadata(t *testing.T) {
	m := meta(t)
	m.Closed, m.ClosedAt = true, closedAt
	a, err := FOCUSMetadata(m)
	if err != nil {
		t.Fatal(err)
	}
	m.Now = time.Now()
	b, _ := FOCUSMetadata(m)
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("closed metadata changed with the clock (-before +after)\n%s", d)
	}
	if a.Schema.CreationDate != "2026-12-02T03:00:07Z" || a.Schema.FocusVersion != "1.2" || a.DataGenerator.DataGenerator != "gpubridge" {
		t.Errorf("metadata %+v", a.Schema)
	}
	open := meta(t)
	if _, err := FOCUSMetadata(open); err == nil {
		t.Error("open period without an export time: no error")
	}
	open.Now = time.Date(2026, 11, 20, 8, 0, 0, 999, time.UTC)
	o, err := FOCUSMetadata(open)
	if err != nil || o.Schema.CreationDate != "2026-11-20T08:00:00Z" || o.Schema.SchemaID != a.Schema.SchemaID {
		t.Errorf("open: %v %s %s", err, o.Schema.CreationDate, o.Schema.SchemaID)
	}
	jpy := m
	jpy.Card.Currency = "JPY"
	j, _ := FOCUSMetadata(jpy)
	if j.Schema.SchemaID == a.Schema.SchemaID {
		t.Error("JPY amounts (scale 0) have the schema id of EUR amounts (scale 2)")
	}
}

// TestGoldenMetadata: the FOCUS metadata of the closed fixture month.
func TestGoldenMetadata(t *testing.T) {
	m := meta(t)
	m.Closed, m.ClosedAt = true, closedAt
	md, err := FOCUSMetadata(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := MarshalMetadata(md)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "2026-11-focus.metadata.json"), string(got))
}
