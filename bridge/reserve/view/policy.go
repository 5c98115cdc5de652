package view

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/internal/table"
)

// PolicyRow is one limit of a booking policy, as show booking-policy
// prints it (and its --json).
type PolicyRow struct {
	Limit   string `json:"limit"`
	Value   string `json:"value"`
	Meaning string `json:"meaning"`
}

// PolicyRows are the limits of the policy that binds a tenant
// (Service.Policy), each with what it means; a zero limit reads "no limit".
func PolicyRows(p reserve.Policy) []PolicyRow {
	span := func(s reserve.Span, zero string) string {
		if s == 0 {
			return zero
		}
		return reserve.FormatDuration(time.Duration(s))
	}
	gpus, from := "no limit (the pool)", "GPUs of a type booked at once"
	if p.MaxGPUs != nil {
		var parts []string
		for _, t := range slices.Sorted(maps.Keys(p.MaxGPUs)) {
			parts = append(parts, fmt.Sprintf("%s=%d", t, p.MaxGPUs[t]))
		}
		if gpus = strings.Join(parts, ","); gpus == "" {
			gpus = "none (no type may be booked)"
		}
	}
	if p.MaxGPUsFromQuota {
		from += " (the tenant's quota: its policy sets none)"
	}
	spend := "none"
	if p.MonthlySpendLimit != nil {
		spend = p.MonthlySpendLimit.String()
	}
	return []PolicyRow{
		{"maxGPUs", gpus, from},
		{"maxWindow", span(p.MaxWindow, "no limit"), "the longest booking"},
		{"minLead", span(p.MinLead, "0s"), "how far ahead a booking must start"},
		{"maxHorizon", span(p.MaxHorizon, "no limit"), "how far ahead a booking may end"},
		{"monthlySpendLimit", spend, "the most the tenant's bookings may cost in a calendar month"},
	}
}

// Policy is show booking-policy's table (its --json: the rows).
func Policy(rows []PolicyRow) table.Table {
	if rows == nil {
		rows = []PolicyRow{}
	}
	t := table.Table{Header: []string{"Limit", "Value", "Meaning"}, Raw: rows}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{r.Limit, r.Value, r.Meaning})
	}
	return t
}
