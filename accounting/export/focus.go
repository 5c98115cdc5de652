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

// focusColumns are the FOCUS 1.0 columns, in the specification's
// (alphabetical) order, followed by our x_ custom columns.
var focusColumns = []string{
	"AvailabilityZone", "BilledCost", "BillingAccountId", "BillingAccountName", "BillingCurrency",
	"BillingPeriodEnd", "BillingPeriodStart", "ChargeCategory", "ChargeClass", "ChargeDescription",
	"ChargeFrequency", "ChargePeriodEnd", "ChargePeriodStart", "CommitmentDiscountCategory",
	"CommitmentDiscountId", "CommitmentDiscountName", "CommitmentDiscountStatus", "CommitmentDiscountType",
	"ConsumedQuantity", "ConsumedUnit", "ContractedCost", "ContractedUnitPrice", "EffectiveCost",
	"InvoiceIssuerName", "ListCost", "ListUnitPrice", "PricingCategory", "PricingQuantity", "PricingUnit",
	"ProviderName", "PublisherName", "RegionId", "RegionName", "ResourceId", "ResourceName", "ResourceType",
	"ServiceCategory", "ServiceName", "SkuId", "SkuPriceId", "SubAccountId", "SubAccountName", "Tags",
	"x_Cluster", "x_Tenant", "x_GpuType", "x_Tier", "x_Kind", "x_UsagePeriod", "x_GpuSeconds", "x_RateBasis",
	"x_JobId", "x_SubmitTime", "x_Revision", "x_User", "x_GpuCount",
}

// focusRow is what one FOCUS row says; the writer maps it to columns.
type focusRow struct {
	account, tenant, typ, basis, user string
	hasTenant                         bool
	tier                              meter.Tier
	kind                              meter.Kind
	usage                             meter.Period
	chargeStart, chargeEnd            int64
	gpuSeconds                        int64
	unit                              pricing.Price
	rateFrom                          string
	amount                            money.Amount
	job                               string // detail only
	submit                            int64
	revision                          int
	count                             int64
}

// writeFOCUS writes a FOCUS dataset: one row per summary row, or per ledger
// line with detail. A charge is Usage; a line booked after its usage
// period was closed is a correction of an invoiced period (ChargeClass
// "Correction"). Quantities are GPU-hours; costs are in the billing
// currency's major unit with its minor digits.
func writeFOCUS(ctx context.Context, w io.Writer, s Summary, lines Lines, withDetail bool) error {
	cw := newCellWriter(w)
	if err := cw.Write(focusColumns); err != nil {
		return err
	}
	m := s.Meta
	rec := make([]string, 0, len(focusColumns))
	cache := focusCache{}
	write := func(r focusRow) error {
		rec = focusRecord(rec[:0], m, cache, r)
		return cw.Write(rec)
	}
	if !withDetail {
		for _, r := range s.Rows {
			p := r.Usage
			fr := focusRow{account: r.Account, tenant: r.Tenant, hasTenant: r.HasTenant, typ: r.Type, tier: r.Tier, kind: r.Kind,
				usage: p, chargeStart: p.StartUnix(), chargeEnd: p.EndUnix(), gpuSeconds: r.GPUSeconds, unit: r.Rate,
				basis: r.Basis, amount: r.Amount}
			if err := write(fr); err != nil {
				return err
			}
		}
	} else {
		err := detail(ctx, m, lines, func(it Item) error {
			return write(focusRow{account: it.Account, tenant: it.Tenant, hasTenant: it.HasTenant, typ: it.Type, tier: it.Tier,
				kind: it.Kind(), usage: it.Period, chargeStart: it.Start, chargeEnd: max(it.End, it.Start), gpuSeconds: it.GPUSeconds,
				unit: it.Quote.UnitPrice(), basis: it.Quote.Basis, rateFrom: it.Quote.From.String(), amount: it.Amount,
				job: strconv.FormatUint(uint64(it.Run.JobID), 10), submit: it.Run.Submit, revision: it.Revision,
				user: it.User, count: it.Count})
		})
		if err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// focusStatic is the part of a FOCUS row that depends only on the group
// (account, type, tier, kind, usage period), computed once per group.
type focusStatic struct {
	class, subName, resType, tags, sku, desc, tenant, resID, resName string
}

type focusKey struct {
	account, tenant, typ string
	tier                 meter.Tier
	kind                 meter.Kind
	usage                meter.Period
}

type focusCache map[focusKey]*focusStatic

func (c focusCache) get(m Meta, r focusRow) *focusStatic {
	k := focusKey{r.account, r.tenant, r.typ, r.tier, r.kind, r.usage}
	if v, ok := c[k]; ok {
		return v
	}
	v := &focusStatic{subName: r.tenant, resType: "GPU", tenant: tenantTag(r)}
	if r.kind == meter.KindAdjustment {
		v.class = "Correction"
	}
	if !r.hasTenant {
		v.subName = r.account
	}
	if pricing.SlicesFromName(r.typ) > 0 {
		v.resType = "MIG slice"
	}
	tags, _ := json.Marshal(map[string]string{"gpubridge/tier": string(r.tier), "gpubridge/gpu-type": r.typ, "gpubridge/account": r.account,
		"gpubridge/tenant": v.tenant})
	v.tags = string(tags)
	v.sku = "gpu-" + r.typ + "-" + string(r.tier)
	v.desc = r.typ + " GPU-hours, " + string(r.tier) + " tier, account " + r.account
	switch r.kind {
	case meter.KindAdjustment:
		v.desc += ", adjustment for " + r.usage.String()
	case meter.KindAccrual:
		v.desc += ", accrued (job still running)"
	}
	v.resID, v.resName = m.Cluster+"/"+r.account+"/"+r.typ, r.typ+" GPUs of account "+r.account
	if len(c) < 1<<16 {
		c[k] = v
	}
	return v
}

func focusRecord(rec []string, m Meta, c focusCache, r focusRow) []string {
	st := c.get(m, r)
	cost := r.amount.String()
	hours := GPUHours(r.gpuSeconds)
	unit := r.unit.String()
	resID, resName := st.resID, st.resName
	skuPrice := st.sku + "-" + unit
	if r.rateFrom != "" {
		skuPrice = st.sku + "-" + r.rateFrom
	}
	job, submit, rev, user, count := "", "", "", "", ""
	if r.job != "" {
		resID = m.Cluster + "/job/" + r.job + "@" + i64(r.submit)
		resName = "job " + r.job
		job, submit, rev, user, count = r.job, unixRFC(r.submit), strconv.Itoa(r.revision), r.user, i64(r.count)
	}
	return append(rec,
		"",                            // AvailabilityZone
		cost,                          // BilledCost
		m.Cluster,                     // BillingAccountId
		m.Cluster,                     // BillingAccountName
		m.Card.Currency,               // BillingCurrency
		unixRFC(m.Period.EndUnix()),   // BillingPeriodEnd
		unixRFC(m.Period.StartUnix()), // BillingPeriodStart
		"Usage",                       // ChargeCategory
		st.class,                      // ChargeClass
		st.desc,                       // ChargeDescription
		"Usage-Based",                 // ChargeFrequency
		unixRFC(r.chargeEnd),          // ChargePeriodEnd
		unixRFC(r.chargeStart),        // ChargePeriodStart
		"", "", "", "", "",            // CommitmentDiscount*
		hours,       // ConsumedQuantity
		"GPU-Hours", // ConsumedUnit
		cost,        // ContractedCost
		unit,        // ContractedUnitPrice
		cost,        // EffectiveCost
		m.Issuer,    // InvoiceIssuerName
		cost,        // ListCost
		unit,        // ListUnitPrice
		"Standard",  // PricingCategory
		hours,       // PricingQuantity
		"GPU-Hours", // PricingUnit
		m.Issuer,    // ProviderName
		m.Issuer,    // PublisherName
		"", "",      // RegionId, RegionName
		resID,                 // ResourceId
		resName,               // ResourceName
		st.resType,            // ResourceType
		"Compute",             // ServiceCategory
		"GPU compute (Slurm)", // ServiceName
		st.sku,                // SkuId
		skuPrice,              // SkuPriceId
		r.account,             // SubAccountId
		st.subName,            // SubAccountName
		st.tags,               // Tags
		m.Cluster, st.tenant, r.typ, string(r.tier), string(r.kind), r.usage.String(), i64(r.gpuSeconds), r.basis,
		job, submit, rev, user, count,
	)
}

func tenantTag(r focusRow) string {
	if r.hasTenant {
		return r.tenant
	}
	return ""
}
