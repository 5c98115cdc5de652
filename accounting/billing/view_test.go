package billing

import (
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
)

func TestCloseLines(t *testing.T) {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if got, want := RereadLine(ingest.Result{From: at.AddDate(0, -1, 0), To: at, Stats: meter.WriteStats{Lines: 4}}), "re-read 2026-11-01T00:00:00Z..2026-12-01T00:00:00Z: 4 ledger lines written\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	nov, _ := meter.ParsePeriod("2026-11")
	if got, want := ClosedLine(nov, ledger.PeriodRecord{Lines: 3, GPUSeconds: 7200, Currency: "EUR"}), "closed 2026-11: 3 lines, 7200 GPU-seconds, 0 EUR\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
