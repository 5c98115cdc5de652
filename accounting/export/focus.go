package export

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
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
	amount                            pricing.Amount
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
	cw := csv.NewWriter(w)
	if err := cw.Write(focusColumns); err != nil {
		return err
	}
	m := s.Meta
	rec := make([]string, 0, len(focusColumns))
	write := func(r focusRow) error {
		rec = focusRecord(rec[:0], m, r)
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

func focusRecord(rec []string, m Meta, r focusRow) []string {
	minor := m.Card.Minor()
	cost := r.amount.Format(minor)
	hours := GPUHours(r.gpuSeconds)
	unit := r.unit.String()
	class := ""
	if r.kind == meter.KindAdjustment {
		class = "Correction"
	}
	subName := r.tenant
	if !r.hasTenant {
		subName = r.account
	}
	resType := "GPU"
	if pricing.SlicesFromName(r.typ) > 0 {
		resType = "MIG slice"
	}
	resID, resName := m.Cluster+"/"+r.account+"/"+r.typ, r.typ+" GPUs of account "+r.account
	if r.job != "" {
		resID = m.Cluster + "/job/" + r.job + "@" + i64(r.submit)
		resName = "job " + r.job
	}
	tags, _ := json.Marshal(map[string]string{"gpubridge/tier": string(r.tier), "gpubridge/gpu-type": r.typ, "gpubridge/account": r.account,
		"gpubridge/tenant": tenantTag(r)})
	sku := "gpu-" + r.typ + "-" + string(r.tier)
	skuPrice := sku + "-" + unit
	if r.rateFrom != "" {
		skuPrice = sku + "-" + r.rateFrom
	}
	desc := r.typ + " GPU-hours, " + string(r.tier) + " tier, account " + r.account
	if r.kind == meter.KindAdjustment {
		desc += ", adjustment for " + r.usage.String()
	}
	if r.kind == meter.KindAccrual {
		desc += ", accrued (job still running)"
	}
	job, submit, rev, user, count := "", "", "", "", ""
	if r.job != "" {
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
		class,                         // ChargeClass
		desc,                          // ChargeDescription
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
		resType,               // ResourceType
		"Compute",             // ServiceCategory
		"GPU compute (Slurm)", // ServiceName
		sku,                   // SkuId
		skuPrice,              // SkuPriceId
		r.account,             // SubAccountId
		subName,               // SubAccountName
		string(tags),          // Tags
		m.Cluster, tenantTag(r), r.typ, string(r.tier), string(r.kind), r.usage.String(), i64(r.gpuSeconds), r.basis,
		job, submit, rev, user, count,
	)
}

func tenantTag(r focusRow) string {
	if r.hasTenant {
		return r.tenant
	}
	return ""
}
