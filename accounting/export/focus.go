package export

import (
	"context"
	"encoding/json"
	"io"
	"strconv"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/internal/money"
)

// FOCUS 1.2 (FinOps Open Cost and Usage Specification): the columns we
// write, their values and the rounding model are described in
// docs/chargeback.md; the checks that hold us to the specification's rules
// are in focuscheck.

// Column indexes of a FOCUS row: the FOCUS columns in the specification's
// (alphabetical) order, then our x_ custom columns.
const (
	cBilledCost = iota
	cBillingAccountID
	cBillingAccountName
	cBillingCurrency
	cBillingPeriodEnd
	cBillingPeriodStart
	cChargeCategory
	cChargeClass
	cChargeDescription
	cChargeFrequency
	cChargePeriodEnd
	cChargePeriodStart
	cCommitmentDiscountCategory
	cCommitmentDiscountID
	cCommitmentDiscountName
	cCommitmentDiscountQuantity
	cCommitmentDiscountStatus
	cCommitmentDiscountType
	cCommitmentDiscountUnit
	cConsumedQuantity
	cConsumedUnit
	cContractedCost
	cContractedUnitPrice
	cEffectiveCost
	cInvoiceID
	cInvoiceIssuerName
	cListCost
	cListUnitPrice
	cPricingCategory
	cPricingQuantity
	cPricingUnit
	cProviderName
	cPublisherName
	cResourceID
	cResourceName
	cResourceType
	cServiceCategory
	cServiceName
	cServiceSubcategory
	cSkuID
	cSkuMeter
	cSkuPriceDetails
	cSkuPriceID
	cSubAccountID
	cSubAccountName
	cTags
	// Custom columns.
	cxCluster
	cxTenant
	cxGpuType
	cxTier
	cxKind
	cxUsagePeriod
	cxGpuSeconds
	cxRateBasis
	cxRateFrom
	cxJobID
	cxSubmitTime
	cxRevision
	cxUser
	cxGpuCount
	cxBooking
	cxTenantDescription
	cxOrganization
	cxCostCenter
	cxBookedGpuSeconds
	nFocusColumns
)

// Data types of the FOCUS metadata's ColumnDefinition.
const (
	tString   = "STRING"
	tDecimal  = "DECIMAL"
	tDateTime = "DATETIME"
	tJSON     = "JSON"
	tInteger  = "INTEGER"
)

// Scales and precisions (digits) of the numbers we write. Amounts have the
// currency's minor digits (scaleMinor, resolved per card).
const (
	scaleMinor     = -1
	scaleQuantity  = 6                              // GPU-hours, GPUHours
	scaleUnitPrice = pricing.PriceScale             // 9
	scaleListCost  = scaleUnitPrice + scaleQuantity // an exact product
)

// String lengths the metadata declares (StringMaxLength, in bytes). Names
// come from slurm_acct_db, where cluster, account, user and TRES names are
// tinytext (at most 255 bytes); the cell of a name that would read as a
// formula gets one more byte, an apostrophe (Neutralize). Tenant names
// are their accounts' names; the provider names are limited to 255 bytes
// by cmd/gpubridge/config. Composite values add their parts and our own words;
// JSON strings may grow sixfold by escaping.
const (
	lenName      = 256  // one Slurm name or a configured name
	lenEnum      = 64   // one of a few fixed words
	lenComposite = 1024 // a few names and words (ResourceId, ChargeDescription: 574 at most)
	lenJSON      = 8192 // Tags, SkuPriceDetails: up to three escaped names
)

// column is one column of the dataset as the metadata describes it.
type column struct {
	name      string
	dataType  string
	precision int // digits, for numbers
	scale     int // fractional digits, for decimals; scaleMinor: the currency's
	maxLen    int // bytes, for strings (0: not declared)
}

var focusColumns = [nFocusColumns]column{
	cBilledCost:                 {name: "BilledCost", dataType: tDecimal, precision: 19, scale: scaleMinor},
	cBillingAccountID:           {name: "BillingAccountId", dataType: tString, maxLen: lenName},
	cBillingAccountName:         {name: "BillingAccountName", dataType: tString, maxLen: lenName},
	cBillingCurrency:            {name: "BillingCurrency", dataType: tString, maxLen: 3},
	cBillingPeriodEnd:           {name: "BillingPeriodEnd", dataType: tDateTime},
	cBillingPeriodStart:         {name: "BillingPeriodStart", dataType: tDateTime},
	cChargeCategory:             {name: "ChargeCategory", dataType: tString, maxLen: lenEnum},
	cChargeClass:                {name: "ChargeClass", dataType: tString, maxLen: lenEnum},
	cChargeDescription:          {name: "ChargeDescription", dataType: tString, maxLen: lenComposite},
	cChargeFrequency:            {name: "ChargeFrequency", dataType: tString, maxLen: lenEnum},
	cChargePeriodEnd:            {name: "ChargePeriodEnd", dataType: tDateTime},
	cChargePeriodStart:          {name: "ChargePeriodStart", dataType: tDateTime},
	cCommitmentDiscountCategory: {name: "CommitmentDiscountCategory", dataType: tString, maxLen: lenEnum},
	cCommitmentDiscountID:       {name: "CommitmentDiscountId", dataType: tString, maxLen: lenComposite},
	cCommitmentDiscountName:     {name: "CommitmentDiscountName", dataType: tString, maxLen: lenComposite},
	cCommitmentDiscountQuantity: {name: "CommitmentDiscountQuantity", dataType: tDecimal, precision: 19, scale: scaleQuantity},
	cCommitmentDiscountStatus:   {name: "CommitmentDiscountStatus", dataType: tString, maxLen: lenEnum},
	cCommitmentDiscountType:     {name: "CommitmentDiscountType", dataType: tString, maxLen: lenEnum},
	cCommitmentDiscountUnit:     {name: "CommitmentDiscountUnit", dataType: tString, maxLen: lenEnum},
	cConsumedQuantity:           {name: "ConsumedQuantity", dataType: tDecimal, precision: 19, scale: scaleQuantity},
	cConsumedUnit:               {name: "ConsumedUnit", dataType: tString, maxLen: lenEnum},
	cContractedCost:             {name: "ContractedCost", dataType: tDecimal, precision: 38, scale: scaleListCost},
	cContractedUnitPrice:        {name: "ContractedUnitPrice", dataType: tDecimal, precision: 19, scale: scaleUnitPrice},
	cEffectiveCost:              {name: "EffectiveCost", dataType: tDecimal, precision: 19, scale: scaleMinor},
	cInvoiceID:                  {name: "InvoiceId", dataType: tString, maxLen: lenComposite},
	cInvoiceIssuerName:          {name: "InvoiceIssuerName", dataType: tString, maxLen: lenName},
	cListCost:                   {name: "ListCost", dataType: tDecimal, precision: 38, scale: scaleListCost},
	cListUnitPrice:              {name: "ListUnitPrice", dataType: tDecimal, precision: 19, scale: scaleUnitPrice},
	cPricingCategory:            {name: "PricingCategory", dataType: tString, maxLen: lenEnum},
	cPricingQuantity:            {name: "PricingQuantity", dataType: tDecimal, precision: 19, scale: scaleQuantity},
	cPricingUnit:                {name: "PricingUnit", dataType: tString, maxLen: lenEnum},
	cProviderName:               {name: "ProviderName", dataType: tString, maxLen: lenName},
	cPublisherName:              {name: "PublisherName", dataType: tString, maxLen: lenName},
	cResourceID:                 {name: "ResourceId", dataType: tString, maxLen: lenComposite},
	cResourceName:               {name: "ResourceName", dataType: tString, maxLen: lenComposite},
	cResourceType:               {name: "ResourceType", dataType: tString, maxLen: lenEnum},
	cServiceCategory:            {name: "ServiceCategory", dataType: tString, maxLen: lenEnum},
	cServiceName:                {name: "ServiceName", dataType: tString, maxLen: lenEnum},
	cServiceSubcategory:         {name: "ServiceSubcategory", dataType: tString, maxLen: lenEnum},
	cSkuID:                      {name: "SkuId", dataType: tString, maxLen: lenComposite},
	cSkuMeter:                   {name: "SkuMeter", dataType: tString, maxLen: lenEnum},
	cSkuPriceDetails:            {name: "SkuPriceDetails", dataType: tJSON, maxLen: lenJSON},
	cSkuPriceID:                 {name: "SkuPriceId", dataType: tString, maxLen: lenComposite},
	cSubAccountID:               {name: "SubAccountId", dataType: tString, maxLen: lenName},
	cSubAccountName:             {name: "SubAccountName", dataType: tString, maxLen: lenName},
	cTags:                       {name: "Tags", dataType: tJSON, maxLen: lenJSON},
	cxCluster:                   {name: "x_Cluster", dataType: tString, maxLen: lenName},
	cxTenant:                    {name: "x_Tenant", dataType: tString, maxLen: lenName},
	cxGpuType:                   {name: "x_GpuType", dataType: tString, maxLen: lenName},
	cxTier:                      {name: "x_Tier", dataType: tString, maxLen: lenEnum},
	cxKind:                      {name: "x_Kind", dataType: tString, maxLen: lenEnum},
	cxUsagePeriod:               {name: "x_UsagePeriod", dataType: tString, maxLen: lenEnum},
	cxGpuSeconds:                {name: "x_GpuSeconds", dataType: tInteger, precision: 19},
	cxRateBasis:                 {name: "x_RateBasis", dataType: tString, maxLen: lenComposite},
	cxRateFrom:                  {name: "x_RateFrom", dataType: tDateTime},
	cxJobID:                     {name: "x_JobId", dataType: tString, maxLen: lenEnum},
	cxSubmitTime:                {name: "x_SubmitTime", dataType: tDateTime},
	cxRevision:                  {name: "x_Revision", dataType: tInteger, precision: 10},
	cxUser:                      {name: "x_User", dataType: tString, maxLen: lenName},
	cxGpuCount:                  {name: "x_GpuCount", dataType: tInteger, precision: 19},
	cxBooking:                   {name: "x_Booking", dataType: tInteger, precision: 19},
	cxTenantDescription:         {name: "x_TenantDescription", dataType: tString, maxLen: lenComposite},
	cxOrganization:              {name: "x_Organization", dataType: tString, maxLen: lenName},
	cxCostCenter:                {name: "x_CostCenter", dataType: tString, maxLen: lenName},
	cxBookedGpuSeconds:          {name: "x_BookedGpuSeconds", dataType: tInteger, precision: 19},
}

// FOCUS values that are the same on every row we write today.
const (
	unitGPUHours       = "GPU-Hours"
	serviceCategory    = "Compute"
	serviceSubcategory = "Other (Compute)" // batch GPU time is none of containers, VMs, serverless, quantum
	serviceName        = "GPU compute (Slurm)"
)

// charge is what kind of charge a row is (ChargeCategory, ChargeFrequency,
// PricingCategory and the CommitmentDiscount columns). Usage priced at the
// rate card's rate is the zero value; a booking's charge is a Purchase of
// its commitment and the use inside it Committed usage (bookingCharge).
type charge struct {
	category   string // "" is "Usage"
	frequency  string // "" is "Usage-Based"
	pricing    string // "" is "Standard"
	commitment commitment
}

// commitment fills the CommitmentDiscount columns; zero means none.
type commitment struct {
	id, name, category, typ, status, quantity, unit string
}

// focusRow is what one FOCUS row says; the writer maps it to columns.
type focusRow struct {
	account, tenant, typ, basis, user string
	hasTenant                         bool
	profile                           Profile
	tier                              meter.Tier
	kind                              meter.Kind
	usage                             meter.Period
	chargeStart, chargeEnd            int64
	gpuSeconds                        int64
	unit                              pricing.Price
	rateFrom                          pricing.Date
	amount                            money.Amount
	charge                            charge
	job                               string // detail only
	submit                            int64
	revision                          int
	count                             int64
	credit                            *creditItem // a credit's line item (detail only)
	booking                           int64
}

// writeFOCUS writes a FOCUS 1.2 dataset: one row per summary row, or per
// ledger line with detail.
func writeFOCUS(ctx context.Context, w io.Writer, s Summary, lines Lines, withDetail bool) error {
	cw := newCellWriter(w)
	head := make([]string, nFocusColumns)
	for i, c := range focusColumns {
		head[i] = c.name
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	m := s.Meta
	fw := focusWriter{m: m, parties: m.Parties.resolve(m.Cluster), cache: focusCache{}, periods: periodNames{}, rec: make([]string, nFocusColumns),
		minor: m.Card.Minor()}
	if m.Closed {
		fw.invoice = InvoiceID(m.Cluster, m.Period)
	}
	write := func(r focusRow) error {
		fw.record(r)
		return cw.Write(fw.rec)
	}
	if !withDetail {
		for _, r := range s.Rows {
			if r.IsCredit() {
				if err := write(creditSummaryRow(r)); err != nil {
					return err
				}
				continue
			}
			p := r.Usage
			fr := focusRow{account: r.Account, tenant: r.Tenant, hasTenant: r.HasTenant, profile: r.Profile, typ: r.Type, tier: r.Tier, kind: r.Kind,
				usage: p, chargeStart: p.StartUnix(), chargeEnd: p.EndUnix(), gpuSeconds: r.GPUSeconds, unit: r.Rate,
				rateFrom: r.From, basis: r.Basis, amount: r.Amount, booking: r.Booking,
				charge: bookingCharge(m.Cluster, r.Kind, r.Tier, r.Booking, r.GPUSeconds)}
			if err := write(fr); err != nil {
				return err
			}
		}
	} else {
		err := detail(ctx, m, lines, func(it Item) error {
			start, end := it.Start, it.End
			if end <= start { // a reversal of a run measured as empty: its month
				start, end = it.Period.StartUnix(), it.Period.EndUnix()
			}
			fr := focusRow{account: it.Account, tenant: it.Tenant, hasTenant: it.HasTenant, profile: it.Profile, typ: it.Type, tier: it.Tier,
				kind: it.Kind(), usage: it.Period, chargeStart: start, chargeEnd: end, gpuSeconds: it.GPUSeconds,
				unit: it.Quote.UnitPrice(), basis: it.Quote.Basis, rateFrom: it.Quote.From, amount: it.Amount,
				job: strconv.FormatUint(uint64(it.Run.JobID), 10), submit: it.Run.Submit, revision: it.Revision,
				user: it.User, count: it.Count, booking: it.Booking,
				charge: bookingCharge(m.Cluster, it.Kind(), it.Tier, it.Booking, it.GPUSeconds)}
			if it.Charge {
				fr.job, fr.user = "", ""
			}
			return write(fr)
		})
		if err != nil {
			return err
		}
		if err := writeFOCUSCredits(m, write); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// InvoiceID is the FOCUS InvoiceId of a closed period: the cluster's bill
// for the month ("testbed-2026-11"). Open periods have none yet.
func InvoiceID(cluster string, p meter.Period) string { return cluster + "-" + p.String() }

// focusStatic is the part of a FOCUS row that depends only on the group
// (account, type, tier, kind, usage period), computed once per group.
type focusStatic struct {
	class, subName, resType, tags, skuID, skuPriceID, skuMeter, skuDetails, desc, tenant, resID, resName string
}

type focusKey struct {
	account, tenant, typ string
	tier                 meter.Tier
	kind                 meter.Kind
	usage                meter.Period
	booking              int64
}

type focusCache map[focusKey]*focusStatic

func (c focusCache) get(m Meta, r focusRow) *focusStatic {
	k := focusKey{r.account, r.tenant, r.typ, r.tier, r.kind, r.usage, r.booking}
	if v, ok := c[k]; ok {
		return v
	}
	v := &focusStatic{subName: r.tenant, resType: "GPU"}
	if r.kind == meter.KindAdjustment || r.kind == meter.KindBooking && r.usage < m.Period {
		// Booked after its usage period was closed: a correction of an
		// invoiced billing period. (A revision within this period is not.)
		v.class = "Correction"
	}
	tags := map[string]string{"gpubridge/tier": string(r.tier), "gpubridge/gpu-type": r.typ, "gpubridge/account": r.account}
	if r.hasTenant {
		v.tenant = r.tenant
		tags["gpubridge/tenant"] = r.tenant
	} else {
		v.subName = r.account
	}
	if _, mig := m.Card.MIG(r.typ); mig {
		v.resType = "MIG slice"
	}
	b, _ := json.Marshal(tags) // strings only: cannot fail
	v.tags = string(b)
	v.skuID, v.skuPriceID = pricing.SkuID(r.typ), pricing.SkuPriceID(r.typ, r.tier)
	v.skuMeter, v.skuDetails = m.Card.SkuMeter(r.typ), m.Card.SkuPriceDetails(r.typ, r.tier)
	v.desc = r.typ + " GPU-hours, " + string(r.tier) + " tier, account " + r.account
	switch r.kind {
	case meter.KindAdjustment:
		v.desc += ", adjustment for " + r.usage.String()
	case meter.KindAccrual:
		v.desc += ", accrued (job still running)"
	}
	v.resID, v.resName = m.Cluster+"/"+r.account+"/"+r.typ, r.typ+" GPUs of account "+r.account
	if r.booking != 0 {
		b := i64(r.booking)
		tags["gpubridge/booking"] = b
		bb, _ := json.Marshal(tags)
		v.tags = string(bb)
		v.resID, v.resName = m.Cluster+"/booking/"+b, "booking "+b+" ("+r.typ+" GPUs of account "+r.account+")"
		if r.kind == meter.KindBooking {
			v.desc = r.typ + " GPU-hours booked, booking " + b + ", account " + r.account
			if r.usage < m.Period {
				v.desc += ", correction for " + r.usage.String()
			}
		} else {
			v.desc += ", inside booking " + b
		}
	}
	if len(c) < 1<<16 {
		c[k] = v
	}
	return v
}

// focusWriter fills one record at a time (rec is reused).
type focusWriter struct {
	m       Meta
	parties Parties
	invoice string
	cache   focusCache
	periods periodNames
	// periodStart and periodEnd are the billing period's bounds as written.
	periodStart, periodEnd string
	minor                  int
	rec                    []string
}

func (fw *focusWriter) record(r focusRow) {
	if r.kind == meter.KindCredit {
		fw.creditRecord(r)
		return
	}
	m, st, rec := fw.m, fw.cache.get(fw.m, r), fw.rec
	fw.commonColumns(rec)
	cost := r.amount.String()
	hours := GPUHours(r.gpuSeconds)
	unit := r.unit.String()
	// ListCost is exactly ListUnitPrice × PricingQuantity as written (no
	// rounding); BilledCost is the invoice amount (lines rounded once).
	list := r.unit.Times(microHours(r.gpuSeconds), scaleQuantity, fw.minor)
	ch := r.charge

	rec[cBilledCost] = cost
	rec[cChargeCategory] = or(ch.category, "Usage")
	rec[cChargeClass] = st.class
	rec[cChargeDescription] = st.desc
	rec[cChargeFrequency] = or(ch.frequency, "Usage-Based")
	rec[cChargePeriodEnd] = unixRFC(r.chargeEnd)
	rec[cChargePeriodStart] = unixRFC(r.chargeStart)
	cd := ch.commitment
	rec[cCommitmentDiscountCategory] = cd.category
	rec[cCommitmentDiscountID] = cd.id
	rec[cCommitmentDiscountName] = cd.name
	rec[cCommitmentDiscountQuantity] = cd.quantity
	rec[cCommitmentDiscountStatus] = cd.status
	rec[cCommitmentDiscountType] = cd.typ
	rec[cCommitmentDiscountUnit] = cd.unit
	if ch.category != "Purchase" { // a purchase consumes nothing
		rec[cConsumedQuantity] = hours
		rec[cConsumedUnit] = unitGPUHours
	}
	rec[cContractedCost] = list // no negotiated prices: the contract is the card
	rec[cContractedUnitPrice] = unit
	rec[cEffectiveCost] = cost // nothing amortized yet
	rec[cListCost] = list
	rec[cListUnitPrice] = unit
	rec[cPricingCategory] = or(ch.pricing, "Standard")
	rec[cPricingQuantity] = hours
	rec[cPricingUnit] = unitGPUHours
	rec[cResourceID] = st.resID
	rec[cResourceName] = st.resName
	rec[cResourceType] = st.resType
	rec[cSkuID] = st.skuID
	rec[cSkuMeter] = st.skuMeter
	rec[cSkuPriceDetails] = st.skuDetails
	rec[cSkuPriceID] = st.skuPriceID
	rec[cSubAccountID] = r.account
	rec[cSubAccountName] = st.subName
	rec[cTags] = st.tags
	rec[cxTenant] = st.tenant
	rec[cxGpuType] = r.typ
	rec[cxTier] = string(r.tier)
	rec[cxKind] = string(r.kind)
	rec[cxUsagePeriod] = fw.periods.get(r.usage)
	// Used and booked GPU-seconds in columns of their own, as in the CSV.
	if r.kind == meter.KindBooking {
		rec[cxGpuSeconds], rec[cxBookedGpuSeconds] = "0", i64(r.gpuSeconds)
	} else {
		rec[cxGpuSeconds], rec[cxBookedGpuSeconds] = i64(r.gpuSeconds), "0"
	}
	fw.profileColumns(rec, r)
	rec[cxRateBasis] = r.basis
	if !r.rateFrom.IsZero() {
		rec[cxRateFrom] = unixRFC(r.rateFrom.Unix())
	}
	if r.booking != 0 {
		rec[cxBooking] = i64(r.booking)
	}
	if r.job != "" {
		rec[cResourceID] = m.Cluster + "/job/" + r.job + "@" + i64(r.submit)
		rec[cResourceName] = "job " + r.job
		rec[cxJobID], rec[cxSubmitTime], rec[cxRevision] = r.job, unixRFC(r.submit), strconv.Itoa(r.revision)
		rec[cxUser], rec[cxGpuCount] = r.user, i64(r.count)
	}
}

// profileColumns fill the tenant profile's custom columns (empty: none).
func (fw *focusWriter) profileColumns(rec []string, r focusRow) {
	rec[cxTenantDescription], rec[cxOrganization], rec[cxCostCenter] = r.profile.Description, r.profile.Organization, r.profile.CostCenter
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// microHours is sec / 3600 in millionths, rounded half away from zero
// (the PricingQuantity GPUHours writes).
func microHours(sec int64) int64 {
	neg := sec < 0
	if neg {
		sec = -sec
	}
	q, r := sec/3600, sec%3600
	v := q*1_000_000 + (r*1_000_000+1800)/3600
	if neg {
		return -v
	}
	return v
}

// commonColumns clears rec and fills the columns every row of the period
// has alike: the billing account, currency and period, the invoice, the
// parties, the service and the cluster.
func (fw *focusWriter) commonColumns(rec []string) {
	m := fw.m
	clear(rec)
	rec[cBillingAccountID] = m.Cluster
	rec[cBillingAccountName] = m.Cluster
	rec[cBillingCurrency] = m.Card.Currency
	if fw.periodEnd == "" {
		fw.periodStart, fw.periodEnd = unixRFC(m.Period.StartUnix()), unixRFC(m.Period.EndUnix())
	}
	rec[cBillingPeriodEnd] = fw.periodEnd
	rec[cBillingPeriodStart] = fw.periodStart
	rec[cInvoiceID] = fw.invoice
	rec[cInvoiceIssuerName] = fw.parties.InvoiceIssuer
	rec[cProviderName] = fw.parties.Provider
	rec[cPublisherName] = fw.parties.Publisher
	rec[cServiceCategory] = serviceCategory
	rec[cServiceName] = serviceName
	rec[cServiceSubcategory] = serviceSubcategory
	rec[cxCluster] = m.Cluster
}
