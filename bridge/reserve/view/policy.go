package view

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// Policy writes the booking policy that binds tenant (Service.Policy), a
// limit a line, each with what it means; a zero limit reads "no limit".
func Policy(tenant string, p reserve.Policy) string {
	span := func(s reserve.Span, zero string) string {
		if s == 0 {
			return zero
		}
		return reserve.FormatDuration(time.Duration(s))
	}
	gpus := "no limit (the pool)"
	if p.MaxGPUs != nil {
		var parts []string
		for _, t := range slices.Sorted(maps.Keys(p.MaxGPUs)) {
			parts = append(parts, fmt.Sprintf("%s=%d", t, p.MaxGPUs[t]))
		}
		gpus = strings.Join(parts, ",")
		if gpus == "" {
			gpus = "none (no GPU type may be booked)"
		}
	}
	spend := "none"
	if p.MonthlySpendLimit != nil {
		spend = p.MonthlySpendLimit.String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Booking policy of tenant %s:\n", tenant)
	fmt.Fprintf(&b, "  maxGPUs:           %s   (GPUs of a type booked at once)\n", gpus)
	fmt.Fprintf(&b, "  maxWindow:         %s   (the longest booking)\n", span(p.MaxWindow, "no limit"))
	fmt.Fprintf(&b, "  minLead:           %s   (how far ahead a booking must start)\n", span(p.MinLead, "0s"))
	fmt.Fprintf(&b, "  maxHorizon:        %s   (how far ahead a booking may end)\n", span(p.MaxHorizon, "no limit"))
	fmt.Fprintf(&b, "  monthlySpendLimit: %s\n", spend)
	return b.String()
}
