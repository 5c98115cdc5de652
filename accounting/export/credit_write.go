package export

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

// The writers' parts for credit lines (credit.go).

func jobString(id uint32) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatUint(uint64(id), 10)
}

func unixOrEmpty(s int64) string {
	if s == 0 {
		return ""
	}
	return unixRFC(s)
}

// bounds are a credit's loss interval, or its loss period when it has none.
func (c Credit) bounds() (int64, int64) {
	if c.End > c.Start && c.Start > 0 {
		return c.Start, c.End
	}
	return c.Period.StartUnix(), c.Period.EndUnix()
}

// writeCSVCredits writes the credits as detail rows after the lines: no
// user, tier, type, GPUs or rate; rate_basis says what the credit is for.
func writeCSVCredits(cw *cellWriter, m Meta) error {
	items, err := newPricer(m).credits()
	if err != nil {
		return fmt.Errorf("export %s credits: %w", m.Period, err)
	}
	for _, it := range items {
		start, end := it.bounds()
		rec := tenantCells([]string{RowLine, m.Period.String(), status(m), m.Cluster}, it.Tenant, it.HasTenant, it.Profile)
		rec = append(rec, it.Account, "", jobString(it.JobID),
			unixOrEmpty(it.Submit), it.Period.String(), string(meter.KindCredit), "0", "", "", "0", unixRFC(start), unixRFC(end))
		rec = secondsCells(rec, 0, 0)
		if err := cw.Write(append(rec, "", it.Description(), m.Card.Currency, it.Amount.String(), "")); err != nil {
			return err
		}
	}
	return nil
}

type jsonCredit struct {
	Key         string `json:"key"`
	Kind        string `json:"kind"`
	Tenant      string `json:"tenant"`
	HasTenant   bool   `json:"hasTenant"`
	Account     string `json:"account"`
	UsagePeriod string `json:"usagePeriod"`
	Correction  bool   `json:"correction"`
	EventID     int64  `json:"eventId,omitempty"`
	Node        string `json:"node,omitempty"`
	JobID       uint32 `json:"jobId,omitempty"`
	Submit      string `json:"submitTime,omitempty"`
	BookingID   int64  `json:"bookingId,omitempty"`
	GPUSeconds  int64  `json:"lostGpuSeconds,omitempty"`
	Start       string `json:"start"`
	End         string `json:"end"`
	Description string `json:"description"`
	Amount      string `json:"amount"`
	AmountMinor int64  `json:"amountMinor"`
}

// writeJSONCredits adds a "credits" array (only when the period has
// credits: exports without them are unchanged).
func writeJSONCredits(w io.Writer, m Meta) error {
	if len(m.Credits) == 0 {
		return nil
	}
	items, err := newPricer(m).credits()
	if err != nil {
		return fmt.Errorf("export %s credits: %w", m.Period, err)
	}
	out := make([]jsonCredit, 0, len(items))
	for _, it := range items {
		start, end := it.bounds()
		out = append(out, jsonCredit{Key: it.Key, Kind: it.Kind, Tenant: it.Tenant, HasTenant: it.HasTenant, Account: it.Account,
			UsagePeriod: it.Period.String(), Correction: it.Period != m.Period, EventID: it.EventID, Node: it.Node, JobID: it.JobID,
			Submit: unixOrEmpty(it.Submit), BookingID: it.BookingID, GPUSeconds: it.GPUSeconds, Start: unixRFC(start), End: unixRFC(end),
			Description: it.Description(), Amount: it.Amount.String(), AmountMinor: it.Amount.Units()})
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, `,"credits":%s`, b)
	return err
}

// creditSummaryRow is a summary row of credits as a FOCUS row.
func creditSummaryRow(r Row) focusRow {
	return focusRow{account: r.Account, tenant: r.Tenant, hasTenant: r.HasTenant, profile: r.Profile, kind: meter.KindCredit, usage: r.Usage,
		chargeStart: r.Usage.StartUnix(), chargeEnd: r.Usage.EndUnix(), amount: r.Amount}
}

// writeFOCUSCredits writes the credits' line items (detail).
func writeFOCUSCredits(m Meta, write func(focusRow) error) error {
	items, err := newPricer(m).credits()
	if err != nil {
		return fmt.Errorf("export %s credits: %w", m.Period, err)
	}
	for i := range items {
		it := &items[i]
		start, end := it.bounds()
		if err := write(focusRow{account: it.Account, tenant: it.Tenant, hasTenant: it.HasTenant, profile: it.Profile, kind: meter.KindCredit, usage: it.Period,
			chargeStart: start, chargeEnd: end, amount: it.Amount, job: jobString(it.JobID), submit: it.Submit, credit: it}); err != nil {
			return err
		}
	}
	return nil
}

// creditRecord fills a FOCUS row of ChargeCategory Credit: an amount
// unrelated to a unit price (ListCost, ContractedCost, EffectiveCost and
// BilledCost are the credit), no consumed or pricing quantity, no SKU; a
// correction when its loss lies in an earlier (closed) billing period.
func (fw *focusWriter) creditRecord(r focusRow) {
	m, rec := fw.m, fw.rec
	fw.commonColumns(rec)
	cost := r.amount.String()
	rec[cBilledCost] = cost
	rec[cChargeCategory] = "Credit"
	if r.usage != m.Period {
		rec[cChargeClass] = "Correction"
	}
	desc := "node health credits, account " + r.account
	if r.credit != nil {
		desc = r.credit.Description()
	}
	if r.usage != m.Period {
		desc += ", for " + r.usage.String()
	}
	rec[cChargeDescription] = desc
	rec[cChargeFrequency] = "One-Time"
	rec[cChargePeriodEnd] = unixRFC(r.chargeEnd)
	rec[cChargePeriodStart] = unixRFC(r.chargeStart)
	rec[cContractedCost] = cost
	rec[cEffectiveCost] = cost
	rec[cListCost] = cost
	rec[cSubAccountID] = r.account
	rec[cSubAccountName] = r.account
	tags := map[string]string{"gpubridge/account": r.account, "gpubridge/credit": "node-health"}
	if r.hasTenant {
		rec[cSubAccountName], rec[cxTenant] = r.tenant, r.tenant
		tags["gpubridge/tenant"] = r.tenant
	}
	if c := r.credit; c != nil {
		tags["gpubridge/credit"] = c.Kind
		switch {
		case c.JobID != 0:
			rec[cResourceID] = m.Cluster + "/job/" + r.job + "@" + i64(r.submit)
			rec[cResourceName], rec[cResourceType] = "job "+r.job, "GPU"
			rec[cxJobID], rec[cxSubmitTime] = r.job, unixRFC(r.submit)
		case c.BookingID != 0:
			b := strconv.FormatInt(c.BookingID, 10)
			rec[cResourceID] = m.Cluster + "/booking/" + b
			rec[cResourceName], rec[cResourceType] = "booking "+b, "GPU"
		}
	}
	b, _ := json.Marshal(tags) // strings only: cannot fail
	rec[cTags] = string(b)
	rec[cxKind] = string(meter.KindCredit)
	fw.profileColumns(rec, r)
	rec[cxUsagePeriod] = r.usage.String()
}
