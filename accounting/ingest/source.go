package ingest

import (
	"context"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

// Source reads job runs from Slurm's accounting.
type Source interface {
	// Name identifies the source; each has its own watermark.
	Name() string
	// Read delivers, from a view of the job records as consistent as the
	// source allows: once, every run still running as of q.To (before or
	// after the finished runs: a source without snapshots reads them last,
	// so a run that ends meanwhile is finished, never both), and every run
	// that ended in [q.From, q.To), in end-time order with a tie-break,
	// skipping runs that ended at q.From with a tie-break <= q.After. Runs
	// without GPUs may be delivered; they cost nothing (with q.AllRows
	// they must be: a re-read compares every run). A source that reads
	// changes (ChangeReader) then delivers, through Handler.Changed, the
	// finished runs of q.Lookup and the rows changed since q.ChangedSince
	// that it did not deliver otherwise.
	Read(ctx context.Context, q Query, h Handler) error
}

// Query is one ingest's window of end times, in Unix seconds.
type Query struct {
	From, To int64
	After    uint64
	// CheckFrom, when not 0, asks the source to check, before it delivers
	// anything, that its records are complete from CheckFrom to To (rows
	// purged or deleted before they were ingested), and to report what is
	// missing through Handler.Missing. Sources that cannot check ignore it.
	CheckFrom int64
	// AllRows asks for every run that ended in the window, whether it
	// holds GPUs or ever started: the window is being re-read, and a run
	// whose record lost its GPUs or its start must reach the ledger to be
	// reversed. Without it a source may skip runs without GPU use.
	AllRows bool
	// Lookup lists runs to find by key (the runs that were running at the
	// last ingest): each one that is neither running nor delivered in the
	// window, and has ended, is delivered through Handler.Changed (a late
	// end record, a runaway job fixed with sacctmgr: its end lies before
	// the window).
	Lookup []meter.RunKey
	// ChangedSince, when not 0, also delivers through Handler.Changed every
	// finished run whose row slurmdbd changed at or after it (mod_time, the
	// database server's clock) and that ended before From.
	ChangedSince int64
}

// Handler receives what a Source reads.
type Handler struct {
	// Running is called once with every run still running. It may run
	// while earlier finished runs are still being written.
	Running func(runs []meter.Run) error
	// Finished is called for each finished run, in order; tie is the
	// source's tie-break among runs with the same end (0 if it has none).
	Finished func(r meter.Run, tie uint64) error
	// Changed is called, after the window, for each finished run found by
	// key (q.Lookup) or by change time (q.ChangedSince), in no particular
	// order; each run once.
	Changed func(r meter.Run) error
	// Missing, when set, is called before anything else with the usage
	// the source's records lack (see Query.CheckFrom); an error stops the
	// read. When nil, missing usage fails the read with *MissingError.
	Missing func([]Missing) error
}

// ChangeReader is a Source that honours Query.Lookup and
// Query.ChangedSince (SlurmDB: job rows by key, and by mod_time). Other
// sources find changed records only by re-reading their window (the
// lookback, a verification pass).
type ChangeReader interface {
	ReadsChanges() bool
}

// Clocked is a Source that reads the clock of the system that writes the
// job records (slurm_acct_db's server, slurmctld). An ingest measures as of
// that clock, so a host whose clock is off writes the same ledger and
// never covers a period that has not ended where the records come from.
type Clocked interface {
	Now(ctx context.Context) (time.Time, error)
}
