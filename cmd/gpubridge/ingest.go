package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/internal/kv"
)

func ingestCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "ingest [from=TIME] [to=TIME] [source=slurmdb|slurmrestd]",
		Short: "Read finished and running jobs from Slurm's accounting into the usage ledger",
		Long: `ingest reads the job runs that ended in [from, to) plus every run still
running, and writes their GPU use to the ledger (GPU-seconds per run, month,
tier and GPU type). Re-reading a window adds nothing; a record that changed
becomes a correction, and one that belongs to a closed month an adjustment.

Without from=, it starts 24 hours before where the last ingest stopped (to
catch records slurmdbd wrote late), or at the start of last month the first
time; to= defaults to now. Times are UTC: 2026-11-01, 2026-11-01T10:00:00.

source=slurmdb (default when slurmdb.dsn is set) reads slurm_acct_db with a
read-only user; source=slurmrestd reads slurmrestd's /slurmdb/jobs in small
adaptive windows, for sites without database access (much slower).

A long ingest shows a progress bar on a terminal and plain lines otherwise.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ka, err := kv.Parse(args, kv.Spec{Keys: []string{"from", "to", "source"}})
			if err != nil {
				return usagef("%v", err)
			}
			if len(ka.Names) > 0 {
				return usagef("unexpected %q: use from=, to=, source=", ka.Names[0])
			}
			var w ingest.Window
			if v, ok := ka.Where["from"]; ok {
				if w.From, err = timeArg("from", v); err != nil {
					return err
				}
			}
			if v, ok := ka.Where["to"]; ok {
				if w.To, err = timeArg("to", v); err != nil {
					return err
				}
			}
			ctx := cmd.Context()
			in, err := a.acctIngester(ctx, ka.Where["source"])
			if err != nil {
				return err
			}
			if !a.verbose {
				in.Log = nil // the summary line below says it; -v shows the ingest's log
			}
			prog := newIngestProgress(a.err)
			in.Progress = prog.update
			res, err := in.Ingest(ctx, w)
			prog.finish()
			if err != nil {
				return err
			}
			fmt.Fprintf(a.out, "ingested %s..%s from %s (as of %s): %d finished runs read (%d with GPUs), %d running; %d ledger lines written (%d corrections, %d adjustments), %d accruals; %s\n",
				res.From.Format(time.RFC3339), res.To.Format(time.RFC3339), res.Source, res.AsOf.Format(time.RFC3339),
				res.Finished, res.GPURuns, res.Running, res.Stats.Lines, res.Stats.Corrections, res.Stats.Adjustments,
				res.Stats.Accruals, res.Elapsed.Round(time.Millisecond))
			return nil
		},
	}
}

// ingestProgress draws a bar on a terminal and prints a line every few
// seconds otherwise.
type ingestProgress struct {
	w    io.Writer
	bar  *progressbar.ProgressBar
	tty  bool
	last time.Time
}

func newIngestProgress(w io.Writer) *ingestProgress {
	p := &ingestProgress{w: w, last: time.Now()}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *ingestProgress) update(pr ingest.Progress) {
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

func (p *ingestProgress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
