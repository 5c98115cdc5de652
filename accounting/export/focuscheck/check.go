package focuscheck

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Level is how strongly the specification asks for a rule.
type Level string

const (
	Must   Level = "MUST"
	Should Level = "SHOULD"
)

// Violation is one broken rule at one place.
type Violation struct {
	Level Level
	// Rule names the specification file and the requirement, e.g.
	// "listcost: ListUnitPrice × PricingQuantity = ListCost".
	Rule string
	// Row is the 1-based data row (0: the header or the whole dataset).
	Row    int
	Column string
	Value  string
	Detail string
}

func (v Violation) String() string {
	s := fmt.Sprintf("%s %s", v.Level, v.Rule)
	if v.Row > 0 {
		s += fmt.Sprintf(" (row %d", v.Row)
		if v.Column != "" {
			s += " " + v.Column
		}
		s += fmt.Sprintf(" %q)", v.Value)
	} else if v.Column != "" {
		s += " (" + v.Column + ")"
	}
	if v.Detail != "" {
		s += ": " + v.Detail
	}
	return s
}

// Provider says which of the specification's "when the provider
// supports ..." conditions hold for the dataset's provider.
type Provider struct {
	PriceLists           bool // publishes price lists: SkuId, SkuPriceId, SkuMeter, SkuPriceDetails
	UnitPrices           bool // publishes unit prices exclusive of discounts: ListUnitPrice
	NegotiatedPricing    bool // ContractedUnitPrice
	UsageMeasurement     bool // ConsumedQuantity, ConsumedUnit
	SubAccounts          bool // SubAccountId, SubAccountName
	Tags                 bool // user or provider-defined tags
	UserTags             bool // users can set tags (else every key is provider-defined and prefixed)
	Resources            bool // billing based on provisioned resources: ResourceId, ResourceName
	ResourceTypes        bool // ResourceType
	CommitmentDiscounts  bool
	CapacityReservations bool
	Regions              bool
	AvailabilityZones    bool
	PricingCategories    bool // more than one pricing category across SKUs
}

// Options are what a check needs beyond the CSV.
type Options struct {
	Provider Provider
	// Metadata is the dataset's FOCUS metadata (JSON); nil checks the
	// data alone (and reports that metadata SHOULD be provided).
	Metadata []byte
	// Version is the FOCUS version the dataset claims; default "1.2".
	Version string
	// Invoices maps an InvoiceId to the invoice's payable amount (a
	// decimal): the BilledCost of its rows must sum to it.
	Invoices map[string]string
	// PriceList looks a row's SkuPriceId up in the provider's price list
	// and returns its list unit price; nil skips the lookup.
	PriceList func(skuPriceID string, row Row) (listUnitPrice string, ok bool)
}

// Row reads one data row by column name; a missing column reads as null.
type Row struct {
	idx map[string]int
	rec []string
}

// Get returns the value of column name ("" is null).
func (r Row) Get(name string) string {
	if i, ok := r.idx[name]; ok {
		return r.rec[i]
	}
	return ""
}

// Check reads a FOCUS CSV dataset from r and returns every violation, in
// order (header, rows, dataset). An error means r is not a CSV file.
func Check(r io.Reader, o Options) ([]Violation, error) {
	if o.Version == "" {
		o.Version = "1.2"
	}
	cr := csv.NewReader(r)
	cr.ReuseRecord = false
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("read the header: %w", err)
	}
	c := &checker{o: o, idx: map[string]int{}, head: head}
	c.header()
	md := c.metadata()
	n := 0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read row %d: %w", n+1, err)
		}
		n++
		c.row(n, Row{idx: c.idx, rec: rec}, md)
	}
	c.dataset()
	return c.out, nil
}

// Musts returns the violations of MUST rules.
func Musts(vs []Violation) []Violation {
	return slices.DeleteFunc(slices.Clone(vs), func(v Violation) bool { return v.Level != Must })
}

type checker struct {
	o    Options
	idx  map[string]int
	head []string
	out  []Violation

	// dataset-wide state
	skuOf       map[string]string // SkuPriceId -> SkuId
	detailsOf   map[string]string // SkuPriceId -> SkuPriceDetails
	accountOf   map[string]string // InvoiceId -> BillingAccountId
	invoiceSums map[string]*big.Rat
	reported    map[string]bool
}

func (c *checker) add(l Level, rule string, row int, col, val, detail string) {
	c.out = append(c.out, Violation{Level: l, Rule: rule, Row: row, Column: col, Value: val, Detail: detail})
}

// has reports whether the dataset has column name.
func (c *checker) has(name string) bool { _, ok := c.idx[name]; return ok }

var (
	customID = regexp.MustCompile(`^x_[A-Z][A-Za-z0-9]*$`)
	pascal   = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
)

func (c *checker) header() {
	const ch = "column_handling"
	lastFOCUS, firstCustom := -1, -1
	for i, name := range c.head {
		if _, dup := c.idx[name]; dup {
			c.add(Must, ch+": column IDs are unique", 0, name, "", "the column appears twice")
			continue
		}
		c.idx[name] = i
		switch {
		case columnTypes[name] != "":
			lastFOCUS = i
		case strings.HasPrefix(name, "x_"):
			if firstCustom < 0 {
				firstCustom = i
			}
			if !customID.MatchString(name) {
				c.add(Should, ch+": custom columns follow the FOCUS naming rules (x_ then Pascal case, alphanumeric)", 0, name, "", "")
			}
		default:
			c.add(Must, ch+": custom columns are prefixed with x_", 0, name, "", "not a FOCUS "+c.o.Version+" column and not prefixed with x_")
		}
	}
	if firstCustom >= 0 && firstCustom < lastFOCUS {
		c.add(Should, ch+": custom columns are listed after all FOCUS columns", 0, c.head[firstCustom], "", "a FOCUS column follows it")
	}
	p := c.o.Provider
	need := func(l Level, rule string, cond bool, names ...string) {
		if !cond {
			return
		}
		for _, n := range names {
			if !c.has(n) {
				c.add(l, strings.ToLower(n)+": "+rule, 0, n, "", "column missing")
			}
		}
	}
	need(Must, "MUST be present in a FOCUS dataset", true, mandatory...)
	need(Must, "MUST be present when the provider publishes price lists", p.PriceLists, "SkuId", "SkuPriceId", "SkuMeter", "SkuPriceDetails")
	need(Must, "MUST be present when the provider publishes unit prices exclusive of discounts", p.UnitPrices, "ListUnitPrice")
	need(Must, "MUST be present when the provider supports negotiated pricing", p.NegotiatedPricing, "ContractedUnitPrice")
	need(Must, "MUST be present when the provider measures usage", p.UsageMeasurement, "ConsumedQuantity", "ConsumedUnit")
	need(Must, "MUST be present when the provider supports sub accounts", p.SubAccounts, "SubAccountId", "SubAccountName")
	need(Must, "MUST be present when the provider supports tags", p.Tags, "Tags")
	need(Must, "MUST be present when the provider bills provisioned resources", p.Resources, "ResourceId", "ResourceName")
	need(Must, "MUST be present when the provider bills typed resources", p.ResourceTypes, "ResourceType")
	need(Must, "MUST be present when the provider supports commitment discounts", p.CommitmentDiscounts, "CommitmentDiscountCategory",
		"CommitmentDiscountId", "CommitmentDiscountName", "CommitmentDiscountQuantity", "CommitmentDiscountStatus", "CommitmentDiscountType", "CommitmentDiscountUnit")
	need(Must, "MUST be present when the provider supports capacity reservations", p.CapacityReservations, "CapacityReservationId", "CapacityReservationStatus")
	need(Must, "MUST be present when the provider supports regions", p.Regions, "RegionId", "RegionName")
	need(Must, "MUST be present when the provider supports more than one pricing category", p.PricingCategories, "PricingCategory")
	need(Should, "is RECOMMENDED to be present", true, "ChargeFrequency", "InvoiceId", "ServiceSubcategory")
	need(Should, "is RECOMMENDED when the provider supports availability zones", p.AvailabilityZones, "AvailabilityZone")
}

// Value formats.
var (
	// numeric_format: an integer, a decimal or E notation "mEn"; a sign
	// only for negative values and negative exponents; no separators.
	numeric  = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?(E-?[0-9]+)?$`)
	dateTime = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$`)
	currency = regexp.MustCompile(`^[A-Z]{3}$`)
	isoDate  = regexp.MustCompile(`[0-9]{4}-?[0-9]{2}-?[0-9]{2}`)
	// unit_format: "<plural-units>", "<singular-unit>-<plural-time-units>"
	// or "<plural-units>/<singular-time-unit>", optionally with a whole
	// quantity ("1000 Tokens") or interval ("Units/3 Months").
	unitFormat = regexp.MustCompile(`^([0-9]+ )?[A-Z][A-Za-z]*(-(Years|Months|Days|Hours|Minutes|Seconds)|/([0-9]+ )?(Year|Month|Day|Hour|Minute|Second|Years|Months|Days|Hours|Minutes|Seconds))?$`)
	// null_handling: placeholders that stand for "no value".
	placeholders = map[string]bool{"null": true, "n/a": true, "na": true, "not applicable": true, "none": true, "nil": true, "-": true, "undefined": true}
)

// row checks row n against the rules of a single row, then against those
// of the dataset (SKUs, invoices, tags, metadata) that it adds to.
func (c *checker) row(n int, r Row, md *metadata) {
	rc := newRowCheck(c, n, r)
	rc.nullsAndStrings()
	rc.notNulls()
	rc.numbers()
	rc.periods()
	rc.allowedValues()
	rc.chargeClass()
	rc.nullRules()
	rc.pairedNulls()
	rc.commitments()
	rc.costs()
	rc.skus()
	rc.units()
	rc.invoices()
	if d := r.Get("SkuPriceDetails"); d != "" {
		c.skuPriceDetails(n, d)
	}
	if t := r.Get("Tags"); t != "" {
		c.tags(n, t, md)
	}
	if md != nil {
		md.values(c, n, r)
	}
}

// rowCheck is the check of one row: the row, its number, and the facts
// most rules depend on (its charge category, whether it is a correction).
type rowCheck struct {
	*checker
	n               int
	r               Row
	cat             string
	correction      bool
	usageOrPurchase bool
	// times holds the valid period bounds of the row, by column.
	times map[string]time.Time
}

// newRowCheck starts the check of row r, number n.
func newRowCheck(c *checker, n int, r Row) *rowCheck {
	cat := r.Get("ChargeCategory")
	return &rowCheck{checker: c, n: n, r: r, cat: cat, correction: r.Get("ChargeClass") == "Correction",
		usageOrPurchase: cat == "Usage" || cat == "Purchase"}
}

// get is the row's cell of column name ("" when null or absent).
func (c *rowCheck) get(name string) string { return c.r.Get(name) }

// must records a violation of a MUST rule on column col unless ok.
func (c *rowCheck) must(ok bool, rule, col, detail string) {
	if !ok {
		c.add(Must, rule, c.n, col, c.get(col), detail)
	}
}

// should records a violation of a SHOULD rule on column col unless ok.
func (c *rowCheck) should(ok bool, rule, col, detail string) {
	if !ok {
		c.add(Should, rule, c.n, col, c.get(col), detail)
	}
}

// nullsAndStrings checks every cell: no placeholder for null
// (null_handling), no string of only spaces (string_handling).
func (c *rowCheck) nullsAndStrings() {
	for name, i := range c.r.idx {
		v := c.r.rec[i]
		if placeholders[strings.ToLower(strings.TrimSpace(v))] && v != "" {
			c.must(false, "null_handling: no placeholder values for null", name, "use null (an empty cell)")
		}
		if v != "" && strings.TrimSpace(v) == "" {
			c.should(false, "string_handling: no strings of only spaces", name, "")
		}
	}
}

// notNulls checks the columns that MUST NOT (or SHOULD NOT) be null.
func (c *rowCheck) notNulls() {
	for _, name := range notNull {
		if c.has(name) {
			c.must(c.get(name) != "", strings.ToLower(name)+": MUST NOT be null", name, "")
		}
	}
	if c.has("ChargeDescription") {
		c.should(c.get("ChargeDescription") != "", "chargedescription: SHOULD NOT be null", "ChargeDescription", "")
	}
}

// numbers checks numeric_format, and the columns that MUST be non-negative.
func (c *rowCheck) numbers() {
	for _, name := range numericColumns {
		if v := c.get(name); v != "" {
			c.must(numeric.MatchString(v), "numeric_format: "+name+" is a single decimal value (no sign for positives, no separators, E notation only)", name, "")
		}
	}
	for _, name := range nonNegative {
		if v := c.get(name); v != "" && numeric.MatchString(v) {
			c.must(!strings.HasPrefix(v, "-") || isZero(v), strings.ToLower(name)+": MUST be a non-negative decimal value", name, "")
		}
	}
}

// periods checks datetime_format and that each period starts before it
// ends; it keeps the times it parsed for chargeClass.
func (c *rowCheck) periods() {
	c.times = map[string]time.Time{}
	for _, name := range []string{"BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd"} {
		v := c.get(name)
		if v == "" {
			continue
		}
		t, err := time.Parse("2006-01-02T15:04:05Z", v)
		if !dateTime.MatchString(v) || err != nil {
			c.must(false, "datetime_format: "+name+" is 'YYYY-MM-DDTHH:mm:ssZ' in UTC", name, "")
			continue
		}
		c.times[name] = t
	}
	for _, p := range [][2]string{{"BillingPeriodStart", "BillingPeriodEnd"}, {"ChargePeriodStart", "ChargePeriodEnd"}} {
		s, okS := c.times[p[0]]
		e, okE := c.times[p[1]]
		if okS && okE {
			c.must(s.Before(e), strings.ToLower(p[0])+": the inclusive start bound is before the exclusive end bound "+p[1], p[0], c.get(p[1]))
		}
	}
}

// allowedValues checks the columns whose values come from a list, and the
// Usage-Based frequency of a Purchase.
func (c *rowCheck) allowedValues() {
	cat := c.cat
	allowed := func(col string, vals ...string) {
		if v := c.get(col); v != "" {
			c.must(slices.Contains(vals, v), strings.ToLower(col)+": MUST be one of the allowed values", col, strings.Join(vals, ", "))
		}
	}
	allowed("ChargeCategory", "Usage", "Purchase", "Tax", "Credit", "Adjustment")
	allowed("ChargeClass", "Correction")
	allowed("ChargeFrequency", "One-Time", "Recurring", "Usage-Based")
	allowed("PricingCategory", "Standard", "Dynamic", "Committed", "Other")
	allowed("CommitmentDiscountCategory", "Spend", "Usage")
	allowed("CommitmentDiscountStatus", "Used", "Unused")
	allowed("CapacityReservationStatus", "Used", "Unused")
	if v := c.get("ServiceCategory"); v != "" {
		c.must(serviceCategories[v], "servicecategory: MUST be one of the allowed values", "ServiceCategory", "")
	}
	if v := c.get("ServiceSubcategory"); v != "" {
		parent, ok := serviceSubcategories[v]
		c.must(ok, "servicesubcategory: MUST be one of the allowed values", "ServiceSubcategory", "")
		if ok && c.get("ServiceCategory") != "" {
			c.must(parent == c.get("ServiceCategory"), "servicesubcategory: has one and only one parent ServiceCategory", "ServiceSubcategory", "its parent is "+parent)
		}
	}
	if v := c.get("BillingCurrency"); v != "" {
		c.must(currency.MatchString(v), "billingcurrency: a three-letter ISO 4217 code (national currency)", "BillingCurrency", "")
	}
	if c.get("ChargeFrequency") == "Usage-Based" {
		c.must(cat != "Purchase", "chargefrequency: MUST NOT be Usage-Based when ChargeCategory is Purchase", "ChargeFrequency", "")
	}
}

// chargeClass checks that a charge of an earlier billing period is a
// correction, and a correction one.
func (c *rowCheck) chargeClass() {
	correction := c.correction
	bs, okB := c.times["BillingPeriodStart"]
	cs, okCS := c.times["ChargePeriodStart"]
	ce, okCE := c.times["ChargePeriodEnd"]
	if okB && okCE && !ce.After(bs) {
		c.must(correction, "chargeclass: MUST NOT be null when the row corrects a previously invoiced billing period", "ChargeClass",
			"the charge period ends at or before BillingPeriodStart")
	}
	if correction && okB && okCS {
		c.must(cs.Before(bs), "chargeclass: Correction is a correction to a previously invoiced billing period (null for a charge of the current one)", "ChargeClass",
			"the charge period starts in the current billing period")
	}
}

// nullRules checks the pricing columns (null when Tax; not null for Usage
// and Purchase unless a correction).
func (c *rowCheck) nullRules() {
	cat, correction, usageOrPurchase := c.cat, c.correction, c.usageOrPurchase
	for _, name := range []string{"ListUnitPrice", "ContractedUnitPrice", "PricingQuantity", "SkuId", "SkuPriceId", "PricingCategory",
		"PricingCurrencyListUnitPrice", "PricingCurrencyContractedUnitPrice"} {
		if !c.has(name) {
			continue
		}
		v := c.get(name)
		if cat == "Tax" {
			c.must(v == "", strings.ToLower(name)+": MUST be null when ChargeCategory is Tax", name, "")
		}
		if usageOrPurchase && !correction {
			c.must(v != "", strings.ToLower(name)+": MUST NOT be null when ChargeCategory is Usage or Purchase and ChargeClass is not Correction", name, "")
		}
	}
}

// pairedNulls checks the columns null exactly when (or whenever) another
// is, and the SHOULDs of SkuMeter and ResourceName.
func (c *rowCheck) pairedNulls() {
	nullIff := func(a, b, rule string) {
		if c.has(a) && c.has(b) {
			c.must((c.get(a) == "") == (c.get(b) == ""), rule, a, b+" = "+c.get(b))
		}
	}
	nullWhen := func(a, b, rule string) { // a is null when b is null
		if c.has(a) && c.get(b) == "" {
			c.must(c.get(a) == "", rule, a, "")
		}
	}
	nullIff("PricingUnit", "PricingQuantity", "pricingunit: null exactly when PricingQuantity is null")
	nullIff("ConsumedUnit", "ConsumedQuantity", "consumedunit: null exactly when ConsumedQuantity is null")
	nullIff("ResourceType", "ResourceId", "resourcetype: null exactly when ResourceId is null")
	nullIff("SubAccountName", "SubAccountId", "subaccountname: null exactly when SubAccountId is null")
	nullIff("SubAccountType", "SubAccountId", "subaccounttype: null exactly when SubAccountId is null")
	nullIff("BillingAccountType", "BillingAccountId", "billingaccounttype: null exactly when BillingAccountId is null")
	nullIff("RegionName", "RegionId", "regionname: null exactly when RegionId is null")
	nullIff("CommitmentDiscountCategory", "CommitmentDiscountId", "commitmentdiscountcategory: null exactly when CommitmentDiscountId is null")
	nullIff("CommitmentDiscountType", "CommitmentDiscountId", "commitmentdiscounttype: null exactly when CommitmentDiscountId is null")
	nullIff("CommitmentDiscountUnit", "CommitmentDiscountQuantity", "commitmentdiscountunit: null exactly when CommitmentDiscountQuantity is null")
	nullWhen("ResourceName", "ResourceId", "resourcename: MUST be null when ResourceId is null")
	nullWhen("CommitmentDiscountName", "CommitmentDiscountId", "commitmentdiscountname: MUST be null when CommitmentDiscountId is null")
	nullWhen("CommitmentDiscountStatus", "CommitmentDiscountId", "commitmentdiscountstatus: MUST be null when CommitmentDiscountId is null")
	nullWhen("CapacityReservationStatus", "CapacityReservationId", "capacityreservationstatus: MUST be null when CapacityReservationId is null")
	nullWhen("SkuMeter", "SkuId", "skumeter: MUST be null when SkuId is null")
	nullWhen("SkuPriceDetails", "SkuPriceId", "skupricedetails: MUST be null when SkuPriceId is null")
	if c.has("SkuMeter") && c.get("SkuId") != "" {
		c.should(c.get("SkuMeter") != "", "skumeter: SHOULD NOT be null when SkuId is not null", "SkuMeter", "")
	}
	if id := c.get("ResourceId"); id != "" {
		c.should(c.get("ResourceName") != id, "resourcename: MUST NOT duplicate a system-generated ResourceId", "ResourceName", "")
	}
}

// commitments checks the columns a commitment discount makes (or keeps from
// being) null: its status and quantity, the capacity reservation status,
// the Committed pricing category and the consumed quantity.
func (c *rowCheck) commitments() {
	cat, correction, usageOrPurchase := c.cat, c.correction, c.usageOrPurchase
	cdID, cdStatus := c.get("CommitmentDiscountId"), c.get("CommitmentDiscountStatus")
	if cdID != "" && cat == "Usage" {
		c.must(cdStatus != "", "commitmentdiscountstatus: MUST NOT be null for Usage with a CommitmentDiscountId", "CommitmentDiscountStatus", "")
	}
	if c.has("CommitmentDiscountQuantity") {
		q := c.get("CommitmentDiscountQuantity")
		if usageOrPurchase && cdID != "" {
			if !correction {
				c.must(q != "", "commitmentdiscountquantity: MUST NOT be null for Usage or Purchase with a CommitmentDiscountId (not a correction)", "CommitmentDiscountQuantity", "")
			}
		} else {
			c.must(q == "", "commitmentdiscountquantity: MUST be null unless Usage or Purchase with a CommitmentDiscountId", "CommitmentDiscountQuantity", "")
		}
	}
	if c.has("CapacityReservationStatus") && c.get("CapacityReservationId") != "" && cat == "Usage" {
		c.must(c.get("CapacityReservationStatus") != "", "capacityreservationstatus: MUST NOT be null for Usage with a CapacityReservationId", "CapacityReservationStatus", "")
	}
	if c.has("PricingCategory") && cat == "Usage" && cdID != "" && cdStatus == "Used" {
		c.must(c.get("PricingCategory") == "Committed", "pricingcategory: MUST be Committed when a commitment discount applies", "PricingCategory", "")
	}
	if c.get("PricingCategory") == "Committed" {
		c.must(cdID != "", "pricingcategory: Committed charges name their CommitmentDiscountId", "PricingCategory", "")
	}
	if c.has("ConsumedQuantity") {
		q := c.get("ConsumedQuantity")
		if cat != "Usage" || cdStatus == "Unused" {
			c.must(q == "", "consumedquantity: MUST be null unless ChargeCategory is Usage (and not an unused commitment)", "ConsumedQuantity", "")
		} else if !correction {
			c.must(q != "", "consumedquantity: MUST NOT be null for Usage (not a correction)", "ConsumedQuantity", "")
		}
	}
}

// costs checks cost = unit price × PricingQuantity (listcost,
// contractedcost, listunitprice, contractedunitprice, pricingquantity):
// exact, no tolerance, except for corrections; and that a Credit, which has
// no unit prices, costs its BilledCost.
func (c *rowCheck) costs() {
	cat, correction := c.cat, c.correction
	pq := c.get("PricingQuantity")
	for _, p := range [][2]string{{"ListUnitPrice", "ListCost"}, {"ContractedUnitPrice", "ContractedCost"}} {
		price, cost := c.get(p[0]), c.get(p[1])
		if correction || price == "" || pq == "" || cost == "" {
			continue
		}
		x, okX := rat(price)
		y, okY := rat(pq)
		z, okZ := rat(cost)
		if okX && okY && okZ {
			prod := new(big.Rat).Mul(x, y)
			c.must(prod.Cmp(z) == 0, strings.ToLower(p[1])+": "+p[0]+" × PricingQuantity = "+p[1]+" (ChargeClass not Correction)", p[1],
				fmt.Sprintf("%s × %s = %s", price, pq, prod.FloatString(18)))
		}
	}
	// Charges unrelated to others, without unit prices (Credit).
	if cat == "Credit" {
		b := c.get("BilledCost")
		for _, p := range [][2]string{{"ListUnitPrice", "ListCost"}, {"ContractedUnitPrice", "ContractedCost"}, {"", "EffectiveCost"}} {
			if (p[0] == "" || c.get(p[0]) == "") && c.has(p[1]) {
				c.must(sameNumber(c.get(p[1]), b), strings.ToLower(p[1])+": MUST match BilledCost for a Credit", p[1], "BilledCost "+b)
			}
		}
	}
}

// skus checks that a SkuPriceId holds no price, currency or date, has one
// parent SkuId and one set of details across the dataset, and is in the
// price list when one is given.
func (c *rowCheck) skus() {
	if id := c.get("SkuPriceId"); id != "" {
		cur, price := c.get("BillingCurrency"), c.get("ListUnitPrice")
		consistent := !isoDate.MatchString(id) && (cur == "" || !slices.Contains(tokens(id), cur)) &&
			(price == "" || !strings.Contains(price, ".") || !strings.Contains(id, price))
		c.must(consistent, "skupriceid: MUST remain consistent over time (it holds no unit price, currency or effective date)", "SkuPriceId", "")
		if sku := c.get("SkuId"); sku != "" {
			if prev, ok := c.skuOf[id]; ok && prev != sku && c.once("sku:"+id) {
				c.must(false, "skupriceid: MUST have one and only one parent SkuId", "SkuPriceId", "SkuId "+prev+" and "+sku)
			} else if !ok {
				if c.skuOf == nil {
					c.skuOf = map[string]string{}
				}
				c.skuOf[id] = sku
			}
		}
		if d := c.get("SkuPriceDetails"); d != "" {
			if prev, ok := c.detailsOf[id]; ok && prev != d && c.once("details:"+id) {
				c.should(false, "skupricedetails: properties of a SkuPriceId SHOULD remain consistent", "SkuPriceDetails", "also "+prev)
			} else if !ok {
				if c.detailsOf == nil {
					c.detailsOf = map[string]string{}
				}
				c.detailsOf[id] = d
			}
		}
		if c.o.PriceList != nil {
			lp, ok := c.o.PriceList(id, c.r)
			c.must(ok, "skupriceid: MUST reference a SKU Price in the provider's price list", "SkuPriceId", "")
			if ok && price != "" {
				c.must(sameNumber(lp, price), "skupriceid: MUST support the lookup of the ListUnitPrice", "ListUnitPrice", "the price list says "+lp)
			}
		}
	}
}

// units checks unit_format (SHOULD).
func (c *rowCheck) units() {
	for _, name := range []string{"ConsumedUnit", "PricingUnit", "CommitmentDiscountUnit"} {
		if v := c.get(name); v != "" {
			c.should(unitFormat.MatchString(v), "unit_format: "+name+" is expressed in the unit format (e.g. GB-Hours)", name, "")
		}
	}
}

// invoices checks that an InvoiceId belongs to one billing account, and
// sums its billed cost.
func (c *rowCheck) invoices() {
	if inv := c.get("InvoiceId"); inv != "" {
		acct := c.get("BillingAccountId")
		if c.accountOf == nil {
			c.accountOf, c.invoiceSums = map[string]string{}, map[string]*big.Rat{}
		}
		if prev, ok := c.accountOf[inv]; ok && prev != acct && c.once("inv:"+inv) {
			c.must(false, "invoiceid: MUST be associated with the related charge and BillingAccountId", "InvoiceId", "billing accounts "+prev+" and "+acct)
		}
		c.accountOf[inv] = acct
		if b, ok := rat(c.get("BilledCost")); ok {
			s := c.invoiceSums[inv]
			if s == nil {
				s = new(big.Rat)
				c.invoiceSums[inv] = s
			}
			s.Add(s, b)
		}
	}
}

// once reports true the first time it sees key (one report per dataset).
func (c *checker) once(key string) bool {
	if c.reported == nil {
		c.reported = map[string]bool{}
	}
	if c.reported[key] {
		return false
	}
	c.reported[key] = true
	return true
}

func (c *checker) dataset() {
	for inv, want := range c.o.Invoices {
		w, ok := rat(want)
		got := c.invoiceSums[inv]
		if got == nil {
			got = new(big.Rat)
		}
		if !ok || got.Cmp(w) != 0 {
			c.add(Must, "billedcost: the BilledCost of an InvoiceId sums to the invoice's payable amount", 0, "BilledCost", inv,
				fmt.Sprintf("sum %s, invoice %s", got.FloatString(6), want))
		}
	}
}

// skuPriceDetails checks the key_value_format and skupricedetails rules.
func (c *checker) skuPriceDetails(n int, v string) {
	obj, errs := keyValue(v)
	for _, e := range errs {
		c.add(Must, "key_value_format: SkuPriceDetails "+e, n, "SkuPriceDetails", v, "")
	}
	for _, kv := range obj {
		ft, focus := skuProperties[kv.key]
		switch {
		case focus:
			want := map[string]string{"Numeric": "number", "String": "string"}[ft]
			if kv.kind != want {
				c.add(Must, "skupricedetails: a FOCUS-defined property's value has its type", n, "SkuPriceDetails", v, kv.key+" is "+ft)
			}
		case strings.HasPrefix(kv.key, "x_"):
			if !pascal.MatchString(strings.TrimPrefix(kv.key, "x_")) {
				c.add(Should, "skupricedetails: property keys are Pascal case", n, "SkuPriceDetails", v, kv.key)
			}
		default:
			c.add(Must, "skupricedetails: a property key begins with x_ unless it is a FOCUS-defined property", n, "SkuPriceDetails", v, kv.key)
		}
	}
}

// tags checks the key_value_format and tags rules.
func (c *checker) tags(n int, v string, md *metadata) {
	obj, errs := keyValue(v)
	for _, e := range errs {
		c.add(Must, "key_value_format: Tags "+e, n, "Tags", v, "")
	}
	for _, kv := range obj {
		if kv.kind == "string" && kv.str == "" {
			c.add(Must, "null_handling: no empty strings for a value that is not there (tags: keys with non-null values)", n, "Tags", v, "key "+kv.key)
		}
		if !c.o.Provider.UserTags && md != nil && md.tagPrefixes != nil {
			ok := false
			for _, p := range md.tagPrefixes {
				ok = ok || (p != "" && strings.HasPrefix(kv.key, p) && len(kv.key) > len(p))
			}
			if !ok {
				c.add(Must, "tags: provider-defined tag keys are prefixed with a provider tag prefix (ProviderTagPrefixes)", n, "Tags", v, "key "+fmt.Sprintf("%q", kv.key))
			}
		}
	}
}

func rat(s string) (*big.Rat, bool) {
	if !numeric.MatchString(s) {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

func sameNumber(a, b string) bool {
	x, okX := rat(a)
	y, okY := rat(b)
	return okX && okY && x.Cmp(y) == 0
}

func isZero(s string) bool { r, ok := rat(s); return ok && r.Sign() == 0 }

func tokens(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '_' || r == '/' || r == ':' || r == '.' || r == ' ' })
}
