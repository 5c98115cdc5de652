package ingest

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

func TestSummary(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	res := Result{Source: "slurmdb", From: at.Add(-24 * time.Hour), To: at, AsOf: at, Start: "the watermark minus the 24h lookback",
		Finished: 5, GPURuns: 4, Running: 2, Changed: 1, Stats: meter.WriteStats{Lines: 7, Corrections: 1, Adjustments: 2, Accruals: 2},
		Elapsed: 1234567 * time.Microsecond, ChangesSince: at.Add(-time.Hour), Verified: true,
		Gone: []meter.RunKey{{Cluster: "tb", JobID: 9, Submit: 100}}}
	want := []string{
		"ingested 2026-11-30T10:00:00Z..2026-12-01T10:00:00Z from slurmdb (as of 2026-12-01T10:00:00Z): 5 finished runs read (4 with GPUs), 2 running, 1 re-read outside the window; 7 ledger lines written (1 corrections, 2 adjustments), 2 accruals; 1.235s",
		"  started at the watermark minus the 24h lookback",
		"  changes pass: rows changed since 2026-12-01T09:00:00Z re-read",
		"  verification: the open periods from 2026-11-30T10:00:00Z re-read in full",
		"  run tb/9@100 was running at the last ingest and is no longer in the job table as running or finished; its lines are kept",
		"",
	}
	if d := cmp.Diff(want, strings.Split(Summary(res), "\n")); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	// Without passes, the summary is two lines.
	if n := strings.Count(Summary(Result{}), "\n"); n != 2 {
		t.Errorf("empty result: %d lines, want 2", n)
	}
}

// Off a terminal the progress is a line every few seconds, none for the
// last report (the summary says it).
func TestProgressPrinterPlain(t *testing.T) {
	var b bytes.Buffer
	p := NewProgressPrinter(&b)
	p.last = time.Now().Add(-time.Minute)
	p.Update(Progress{At: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Runs: 3, Lines: 2})
	p.Update(Progress{Runs: 4}) // within 5 s of the last line
	p.last = time.Now().Add(-time.Minute)
	p.Update(Progress{Done: true})
	p.Finish()
	if got := b.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, "reached 2026-12-01T00:00:00Z  3 runs read  2 lines written") {
		t.Errorf("progress %q", got)
	}
}
