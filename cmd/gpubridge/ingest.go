package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
	"github.com/gpubridge/gpubridge/internal/kv"
)

func ingestCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "ingest [from=TIME] [to=TIME] [source=slurmdb|slurmrestd] [pass=changes|verify|scheduled] [accept-missing=FROM..TO]",
		Short: "Read finished and running jobs from Slurm's accounting into the usage ledger",
		Long: `ingest reads the job runs that ended in [from, to) plus every run still
running, and writes their GPU use to the ledger (GPU-seconds per run, month,
tier and GPU type). Re-reading a window adds nothing; a record that changed
becomes a correction (a run corrected to zero length, or that lost its GPUs
or its start, is reversed to zero), and one that belongs to a closed month
an adjustment in the open month, tagged with its own month.

Without from=, it starts 24 hours before where the last ingest stopped (to
catch records slurmdbd wrote late), or at the start of last month the first
time; to= defaults to now. Times are UTC: 2026-11-01, 2026-11-01T10:00:00.
The summary line says where the window started and why.

Every ingest from slurm_acct_db also looks up, by key, the runs that were
running at the last ingest and have ended since outside the window (a late
end record, a runaway job fixed with sacctmgr). pass=changes also re-reads
every row slurmdbd changed since the last changes pass (by mod_time: a full
scan of the job table); pass=verify re-reads the open periods in full and
compares them with the ledger; pass=scheduled does what the daemon's ingest
job does (incremental, with a changes pass every hour and a verification
every day). "gpubridge show ingest" says how far each got.

accept-missing=FROM..TO ingests past a gap of purged job rows that slurmdbd's
rollups still count (the ingest refuses such a gap, naming its hours): GPU
use without job rows inside [FROM, TO) is reported and written to the audit
log, never billed. Give the hours the refusal named.

source=slurmdb (default when slurmdb.dsn is set) reads slurm_acct_db with a
read-only user; source=slurmrestd reads slurmrestd's /slurmdb/jobs in small
adaptive windows, for sites without database access (much slower; it cannot
look up runs by key or by mod_time, so it relies on the lookback and the
verification).

A long ingest shows a progress bar on a terminal and plain lines otherwise.`,
		RunE: a.do(takes{Spec: kv.Spec{Keys: []string{"from", "to", "source", "pass", "accept-missing"}}, names: noName,
			usage: "unexpected %q: use from=, to=, source=, pass=, accept-missing="},
			func(ctx context.Context, p kv.Args) error {
				r, err := app.ParseIngest(p.Where)
				if err != nil {
					return err
				}
				return tells(a, ingest.Summary)(a.Ingest(ctx, r, a.err))
			}),
	}
}

func showIngestCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "ingest",
		Short: "How far the ledger is complete: watermarks, running jobs, changes passes, verifications",
		Long: `Shows, for the configured cluster, what the usage ledger holds: per source,
the watermark (every run that ended before it is in the ledger), when the
running jobs were last read (their accruals are as of then), the last changes
pass (every change slurmdbd made to a job row before it has been re-read)
and the last verification (the open periods re-read in full and compared),
the end-time ranges ingested so far and the closed periods.`,
		RunE: a.do(onlyFilters(ledger.StateTable("", ledger.State{})), func(ctx context.Context, _ kv.Args) error {
			return prints(a, app.IngestStatus.Printout)(a.IngestState(ctx))
		}),
	}
}
