package ingest

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Summary is what `gpubridge ingest` prints of a result: one line of
// counts, where the window started and why, and a line per pass, accepted
// gap and run gone from the job table.
func Summary(res Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ingested %s..%s from %s (as of %s): %d finished runs read (%d with GPUs), %d running, %d re-read outside the window; %d ledger lines written (%d corrections, %d adjustments), %d accruals; %s\n",
		res.From.Format(time.RFC3339), res.To.Format(time.RFC3339), res.Source, res.AsOf.Format(time.RFC3339),
		res.Finished, res.GPURuns, res.Running, res.Changed, res.Stats.Lines, res.Stats.Corrections, res.Stats.Adjustments,
		res.Stats.Accruals, res.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(&b, "  started at %s\n", res.Start)
	if !res.ChangesSince.IsZero() {
		fmt.Fprintf(&b, "  changes pass: rows changed since %s re-read\n", res.ChangesSince.Format(time.RFC3339))
	}
	if res.Verified {
		fmt.Fprintf(&b, "  verification: the open periods from %s re-read in full\n", res.From.Format(time.RFC3339))
	}
	for _, m := range res.Missing {
		fmt.Fprintf(&b, "  accepted gap, not billed: %s\n", m)
	}
	for _, k := range res.Gone {
		fmt.Fprintf(&b, "  run %s was running at the last ingest and is no longer in the job table as running or finished; its lines are kept\n", k)
	}
	return b.String()
}

// ProgressPrinter draws a bar on a terminal and prints a line every few
// seconds otherwise; Update is an Ingester's Progress.
type ProgressPrinter struct {
	w    io.Writer
	bar  *progressbar.ProgressBar
	tty  bool
	last time.Time
}

// NewProgressPrinter prints an ingest's progress on w.
func NewProgressPrinter(w io.Writer) *ProgressPrinter {
	p := &ProgressPrinter{w: w, last: time.Now()}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// Update shows pr.
func (p *ProgressPrinter) Update(pr Progress) {
	if p.tty {
		if p.bar == nil {
			p.bar = progressbar.NewOptions(1000, progressbar.OptionSetWriter(p.w), progressbar.OptionSetDescription("ingest"),
				progressbar.OptionSetWidth(30), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		}
		p.bar.Describe(fmt.Sprintf("ingest %s  %d runs  %d lines", pr.At.Format("2006-01-02 15:04"), pr.Runs, pr.Lines))
		_ = p.bar.Set(int(pr.Fraction() * 1000))
		return
	}
	if pr.Done || time.Since(p.last) < 5*time.Second {
		return
	}
	p.last = time.Now()
	fmt.Fprintf(p.w, "ingest: %3.0f%%  reached %s  %d runs read  %d lines written\n", 100*pr.Fraction(), pr.At.Format(time.RFC3339), pr.Runs, pr.Lines)
}

// Finish clears the bar, once the ingest is over.
func (p *ProgressPrinter) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
