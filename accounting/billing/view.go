package billing

import (
	"fmt"
	"time"

	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
)

// What `gpubridge close` prints.

// RereadLine says what the re-read before a close wrote.
func RereadLine(res ingest.Result) string {
	return fmt.Sprintf("re-read %s..%s: %d ledger lines written\n", res.From.Format(time.RFC3339), res.To.Format(time.RFC3339), res.Stats.Lines)
}

// ClosedLine says what closing period p recorded.
func ClosedLine(p meter.Period, rec ledger.PeriodRecord) string {
	return fmt.Sprintf("closed %s: %d lines, %d GPU-seconds, %s %s\n", p, rec.Lines, rec.GPUSeconds, rec.Amount, rec.Currency)
}
