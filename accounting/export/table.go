package export

import (
	"fmt"
	"strconv"

	"github.com/gpubridge/gpubridge/internal/money"
	"github.com/gpubridge/gpubridge/internal/table"
)

// UtilizationTable lays out each booking's utilization in the summaries
// (`show usage`, after the usage table when a period has bookings): the
// GPU-hours booked (charged), used by jobs inside its reservation, idle,
// and the used share. A booking whose charge is not written yet shows
// Pending for booked, idle and share (JSON null), never a negative idle.
func UtilizationTable(sums []Summary) table.Table {
	t := table.Table{
		Header: []string{"Period", "Tenant", "Account", "Booking", "GPUType", "BookedGPUHours", "UsedGPUHours", "IdleGPUHours", "Utilization"},
		Keys:   []string{"period", "tenant", "account", "booking", "gpuType", "bookedGPUHours", "usedGPUHours", "idleGPUHours", "utilization"},
		Kinds:  []table.Kind{table.String, table.String, table.String, table.Number, table.String, table.Decimal, table.Decimal, table.Decimal, table.String},
		Rows:   [][]string{},
	}
	for _, s := range sums {
		for _, u := range s.Utilization() {
			pc := u.Percent()
			booked, idle, share := GPUHours(u.Booked), GPUHours(u.Idle()), fmt.Sprintf("%d.%02d%%", pc/100, pc%100)
			if u.Pending() {
				booked, idle, share = Pending, Pending, Pending
			}
			t.Rows = append(t.Rows, []string{s.Meta.Period.String(), u.Tenant, u.Account, i64(u.Booking), u.Type,
				booked, GPUHours(u.Used), idle, share})
		}
	}
	return t
}

// Pending stands for a booking's booked and idle GPU-hours and its
// utilization while its charge is not written yet.
const Pending = "pending"

// UsageTable lays out summaries (one per period) as `show usage` prints
// them: one row per tenant, GPU type, tier and kind; with totals, a total
// row per tenant and one per period after each period's rows (a total
// that leaves out use without a rate says "+ unpriced"). A row without a
// rate shows "no rate" and no amount (JSON null).
func UsageTable(sums []Summary, totals bool) table.Table {
	t := table.Table{
		Header: []string{"Period", "Status", "Tenant", "Account", "GPUType", "Tier", "Kind", "UsagePeriod", "GPUHours", "GPUSeconds", "Rate", "Amount", "Currency", "Booking"},
		Keys:   []string{"period", "status", "tenant", "account", "gpuType", "tier", "kind", "usagePeriod", "gpuHours", "gpuSeconds", "rate", "amount", "currency", "booking"},
		Kinds: []table.Kind{table.String, table.String, table.String, table.String, table.String, table.String, table.String, table.String,
			table.Decimal, table.Number, table.Decimal, table.Decimal, table.String, table.Number},
		Rows: [][]string{},
	}
	for _, s := range sums {
		period, status, cur := s.Meta.Period.String(), "open", s.Meta.Card.Currency
		if s.Meta.Closed {
			status = "closed"
		}
		unpriced := map[string]bool{}
		for _, r := range s.Rows {
			rate, amount := r.Rate.String(), r.Amount.String()
			if r.Rate < 0 {
				rate, amount = "no rate", "-"
				unpriced[r.Account], unpriced["*"] = true, true
			}
			if r.IsCredit() {
				rate = "-" // an amount, not GPU time at a rate
			}
			t.Rows = append(t.Rows, []string{period, status, r.Tenant, r.Account, r.Type, string(r.Tier), string(r.Kind),
				r.Usage.String(), GPUHours(r.GPUSeconds), strconv.FormatInt(r.GPUSeconds, 10), rate, amount, cur, bookingCell(r.Booking)})
		}
		if !totals {
			continue
		}
		amount := func(account string, v money.Amount) string {
			if unpriced[account] {
				return v.String() + " + unpriced"
			}
			return v.String()
		}
		for _, tt := range s.Tenants() {
			t.Rows = append(t.Rows, []string{period, status, tt.Tenant, tt.Account, "*", "*", "total", "",
				GPUHours(tt.GPUSeconds), strconv.FormatInt(tt.GPUSeconds, 10), "", amount(tt.Account, tt.Amount), cur, ""})
		}
		t.Rows = append(t.Rows, []string{period, status, "*", "*", "*", "*", "total", "",
			GPUHours(s.GPUSeconds), strconv.FormatInt(s.GPUSeconds, 10), "", amount("*", s.Amount), cur, ""})
	}
	return t
}

// UsageViews are what show usage prints of sums for the output options
// o: a note per period without use (not with --json), the usage table
// (with totals in aligned text), and, in aligned text without format= or
// where, the booking utilization table after its heading (heading empty
// when there is none to show).
func UsageViews(sums []Summary, o table.Options) (notes []string, usage table.Table, heading string, util table.Table) {
	for _, s := range sums {
		if len(s.Rows) == 0 && !o.JSON {
			notes = append(notes, fmt.Sprintf("no GPU use booked in %s yet", s.Meta.Period))
		}
	}
	text := !o.JSON && !o.Parsable && !o.Trailing
	usage = UsageTable(sums, text)
	if util = UtilizationTable(sums); text && len(util.Rows) > 0 && len(o.Format) == 0 && len(o.Where) == 0 {
		heading = "\nBooking utilization (booked GPU-hours vs used by jobs inside the booking):\n"
	}
	return notes, usage, heading, util
}
