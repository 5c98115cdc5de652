package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
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
		RunE: func(cmd *cobra.Command, args []string) error {
			ka, err := kv.Parse(args, kv.Spec{Keys: []string{"from", "to", "source", "pass", "accept-missing"}})
			if err != nil {
				return usagef("%v", err)
			}
			if len(ka.Names) > 0 {
				return usagef("unexpected %q: use from=, to=, source=, pass=, accept-missing=", ka.Names[0])
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
			var accept *ingest.Accept
			if v, ok := ka.Where["accept-missing"]; ok {
				if accept, err = acceptArg(v); err != nil {
					return err
				}
			}
			pass := ka.Where["pass"]
			switch pass {
			case "":
			case "changes":
				w.Changes = true
			case "verify", "scheduled":
				if !w.From.IsZero() {
					return usagef("pass=%s chooses its own window: leave out from=", pass)
				}
			default:
				return usagef("pass=%s: want changes, verify or scheduled", pass)
			}
			ctx := cmd.Context()
			in, err := a.acctIngester(ctx, ka.Where["source"])
			if err != nil {
				return err
			}
			if !a.Verbose {
				in.Log = nil // the summary line below says it; -v shows the ingest's log
			}
			in.AcceptMissing = accept
			prog := newIngestProgress(a.err)
			in.Progress = prog.update
			var res ingest.Result
			switch pass {
			case "verify":
				in.VerifyEvery, in.ChangesEvery = time.Nanosecond, time.Nanosecond
				res, err = in.Scheduled(ctx)
			case "scheduled":
				res, err = in.Scheduled(ctx)
			default:
				res, err = in.Ingest(ctx, w)
			}
			prog.finish()
			if err != nil {
				return err
			}
			fmt.Fprintf(a.out, "ingested %s..%s from %s (as of %s): %d finished runs read (%d with GPUs), %d running, %d re-read outside the window; %d ledger lines written (%d corrections, %d adjustments), %d accruals; %s\n",
				res.From.Format(time.RFC3339), res.To.Format(time.RFC3339), res.Source, res.AsOf.Format(time.RFC3339),
				res.Finished, res.GPURuns, res.Running, res.Changed, res.Stats.Lines, res.Stats.Corrections, res.Stats.Adjustments,
				res.Stats.Accruals, res.Elapsed.Round(time.Millisecond))
			fmt.Fprintf(a.out, "  started at %s\n", res.Start)
			if !res.ChangesSince.IsZero() {
				fmt.Fprintf(a.out, "  changes pass: rows changed since %s re-read\n", res.ChangesSince.Format(time.RFC3339))
			}
			if res.Verified {
				fmt.Fprintf(a.out, "  verification: the open periods from %s re-read in full\n", res.From.Format(time.RFC3339))
			}
			for _, m := range res.Missing {
				fmt.Fprintf(a.out, "  accepted gap, not billed: %s\n", m)
			}
			for _, k := range res.Gone {
				fmt.Fprintf(a.out, "  run %s was running at the last ingest and is no longer in the job table as running or finished; its lines are kept\n", k)
			}
			return nil
		},
	}
}

// acceptArg reads accept-missing=FROM..TO.
func acceptArg(v string) (*ingest.Accept, error) {
	f, t, ok := strings.Cut(v, "..")
	if !ok {
		return nil, usagef("accept-missing=%q: want FROM..TO, e.g. accept-missing=2026-11-20T12:00..2026-11-20T14:00 (the hours the refusal named)", v)
	}
	from, err := timeArg("accept-missing", f)
	if err != nil {
		return nil, err
	}
	to, err := timeArg("accept-missing", t)
	if err != nil {
		return nil, err
	}
	if !to.After(from) {
		return nil, usagef("accept-missing=%q: the end must be after the start", v)
	}
	return &ingest.Accept{From: from, To: to, Actor: actor()}, nil
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.noNames(args, ingestStateTable("", ledger.State{})); err != nil {
				return err
			}
			c, err := a.Config()
			if err != nil {
				return err
			}
			st, err := a.ledgerStore(cmd.Context())
			if err != nil {
				return err
			}
			s, err := st.State(cmd.Context(), c.Cluster)
			if err != nil {
				return err
			}
			return a.printIngestState(c.Cluster, s)
		},
	}
}

// ingestState is one row of show ingest --json: a source's watermark and
// passes; a time that never happened is left out.
type ingestState struct {
	Cluster            string     `json:"cluster"`
	Source             string     `json:"source"`
	CompleteThrough    *time.Time `json:"completeThrough,omitempty"`
	RunningAsOf        *time.Time `json:"runningAsOf,omitempty"`
	ChangesSeenThrough *time.Time `json:"changesSeenThrough,omitempty"`
	ChangesPassAt      *time.Time `json:"changesPassAt,omitempty"`
	VerifiedFrom       *time.Time `json:"verifiedFrom,omitempty"`
	VerifiedThrough    *time.Time `json:"verifiedThrough,omitempty"`
	VerifiedAt         *time.Time `json:"verifiedAt,omitempty"`
}

// ingestStateTable lays out the ledger's state per source (show ingest).
func ingestStateTable(cluster string, s ledger.State) table.Table {
	t := table.Table{
		Header: []string{"Cluster", "Source", "CompleteThrough", "RunningAsOf", "ChangesSeenThrough", "ChangesPassAt", "VerifiedFrom", "VerifiedThrough", "VerifiedAt"},
		Keys:   []string{"cluster", "source", "completeThrough", "runningAsOf", "changesSeenThrough", "changesPassAt", "verifiedFrom", "verifiedThrough", "verifiedAt"},
	}
	at := func(v int64) *time.Time {
		if v == 0 {
			return nil
		}
		t := time.Unix(v, 0).UTC()
		return &t
	}
	ts := func(v int64) string {
		if v == 0 {
			return "-"
		}
		return time.Unix(v, 0).UTC().Format(time.RFC3339)
	}
	passes := map[[2]string]meter.Pass{}
	for _, p := range s.Passes {
		passes[[2]string{p.Source, p.Kind}] = p
	}
	raw := []ingestState{}
	for _, src := range slices.Sorted(maps.Keys(s.Watermarks)) {
		ch, ve := passes[[2]string{src, meter.PassChanges}], passes[[2]string{src, meter.PassVerify}]
		t.Rows = append(t.Rows, []string{cluster, src, ts(s.Watermarks[src].Through), ts(s.AccrualsAsOf), ts(ch.AsOf), ts(ch.Finished),
			ts(ve.From), ts(ve.AsOf), ts(ve.Finished)})
		raw = append(raw, ingestState{Cluster: cluster, Source: src, CompleteThrough: at(s.Watermarks[src].Through), RunningAsOf: at(s.AccrualsAsOf),
			ChangesSeenThrough: at(ch.AsOf), ChangesPassAt: at(ch.Finished), VerifiedFrom: at(ve.From), VerifiedThrough: at(ve.AsOf), VerifiedAt: at(ve.Finished)})
	}
	t.Raw = raw
	return t
}

func (a *App) printIngestState(cluster string, s ledger.State) error {
	t := ingestStateTable(cluster, s)
	ts := func(v int64) string {
		if v == 0 {
			return "-"
		}
		return time.Unix(v, 0).UTC().Format(time.RFC3339)
	}
	if len(t.Rows) == 0 && !a.output.JSON {
		fmt.Fprintf(a.err, "nothing ingested into this ledger yet for cluster %s: run gpubridge ingest\n", cluster)
	}
	if err := a.Print(t); err != nil {
		return err
	}
	if a.output.JSON || a.output.Parsable {
		return nil
	}
	var cov []string
	for _, r := range s.Coverage {
		cov = append(cov, ts(r[0])+".."+ts(r[1]))
	}
	var closed []string
	for _, p := range slices.Sorted(maps.Keys(s.Closed)) {
		closed = append(closed, p.String())
	}
	fmt.Fprintf(a.out, "\ningested end times: %s\nclosed periods: %s\n", noneIfEmpty(strings.Join(cov, ", ")), noneIfEmpty(strings.Join(closed, ", ")))
	return nil
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
