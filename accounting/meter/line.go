package meter

import "github.com/gpubridge/gpubridge/internal/interval"

// Kind says what a ledger line is.
type Kind string

const (
	// KindUsage is a line booked in the period its use belongs to.
	KindUsage Kind = "usage"
	// KindAdjustment is a line booked in a later open period because the
	// period its use belongs to was closed when the line was written (a
	// late record, or a correction of a closed period).
	KindAdjustment Kind = "adjustment"
	// KindAccrual is the month-to-date part of a still-running run. It is
	// not in the ledger; reports show it beside the ledger until the run ends.
	KindAccrual Kind = "accrual"
	// KindBooking is a booking charge: a booking's GPUs × its window (as
	// far as its cancellation policy charges it) in one period, at the
	// booked rate. A correction of a closed period's charge is booked in
	// the next open period, like an adjustment, and keeps this kind.
	KindBooking Kind = "booking"
)

// Line is one ledger line: a Usage (or a correction of one) and where it is
// booked. The ledger's unique key is (Usage.Key(), Revision).
//
// Revision 0 is the first line for its key. When a later ingest computes a
// different total for the same key (Slurm corrected the record, or a run
// accrued to a period end turned out to end earlier), the ledger inserts a
// revision n+1 whose GPUSeconds is the difference, so the sum of all
// revisions of a key always equals the latest measurement, and nothing is
// updated or deleted.
type Line struct {
	Usage
	Account  string
	User     string
	Revision int
	Booked   Period // the period whose bill carries this line
	// Charge marks a booking charge (kind booking): Usage.Booking is the
	// booking, Run is only {Cluster}, Tier is Booked, Start and End are
	// the charged part of the booking's window in the period.
	Charge bool
}

// Kind derives the line's kind: an adjustment when it is booked in a period
// other than the one its use belongs to.
func (l Line) Kind() Kind {
	if l.Charge {
		return KindBooking
	}
	if !l.Final {
		return KindAccrual
	}
	if l.Booked != l.Period {
		return KindAdjustment
	}
	return KindUsage
}

// Batch is what an ingest hands the ledger in one transaction: measured
// finished runs (all usages of a run are in the same batch) and how far the
// source's stream has come.
type Batch struct {
	// Source names the job-record source ("slurmdb", "slurmrestd"): each
	// has its own watermark.
	Source string
	Runs   []MeasuredRun
	// With this batch, every finished run with End in [From, Through) has
	// been handed to the ledger (by it and the earlier batches of the same
	// ingest). After is the source's tie-break at Through (the source's
	// tie-break of the last run that ended at Through; 0 if unused). A
	// source that delivers its window in no particular order (SlurmDB)
	// sends Through = From until its last batch, which has Through = the
	// window's end: the window is covered only once it is complete.
	From, Through int64
	After         uint64
	// CoveredTo, when greater than Through, extends the end-time range the
	// ledger records as ingested to [From, CoveredTo): an intermediate
	// batch has written some runs that ended at Through, so Through itself
	// must count as covered (a later run there is merely compared, never
	// missed).
	CoveredTo int64
	// Touch, when not empty, is the whole window of the ingest the batch
	// belongs to: the ledger records it as touched (it may hold lines from
	// now on, even if the ingest dies before it covers the window), so a
	// later ingest compares the runs that end there instead of inserting
	// them blindly.
	Touch interval.Interval
	// Fresh, when not nil, lists the parts of the window that no ingest
	// had touched when this one began: a run that ends there cannot have
	// lines yet, unless it crossed a period end while running, and is
	// inserted without a lookup. Nil: the ledger decides by the ranges it
	// has touched (an empty, non-nil set: no part is fresh).
	Fresh interval.Set
	// CheckAll compares every run of the batch with the ledger, wherever
	// its end lies: runs read outside the window's order (a run that
	// vanished from the running runs, a row whose mod_time says it
	// changed). Such a batch has no Source and moves no watermark.
	CheckAll bool
	// ReachedEnd is the latest end among the runs handed over so far (for
	// progress reports; an unordered source's Through does not move).
	ReachedEnd int64
}

// Covered returns the end of the range b marks as ingested.
func (b Batch) Covered() int64 { return max(b.Through, b.CoveredTo) }

// MeasuredRun is a run with its usages as of the ingest's as-of time. A
// finished run with no usages (it never started, ran for zero seconds, or
// holds no GPUs) is still handed to the ledger when it may have lines
// there: the ledger reverses them to zero.
type MeasuredRun struct {
	Run    Run
	Usages []Usage
}

// Watermark is how far a source's stream of finished runs, ordered by end
// time, has been written to the ledger: every run with End < Through is in,
// and so are the runs with End == Through up to tie-break After.
type Watermark struct {
	Source  string
	Through int64
	After   uint64
}

// WriteStats counts what one write to the ledger did.
type WriteStats struct {
	Runs        int // runs handed in
	Lines       int // lines inserted (all kinds)
	Corrections int // of which revisions > 0
	Adjustments int // of which booked in a later period than their use
	Checked     int // runs compared with existing lines
	Accruals    int // accrual rows written (ReplaceAccruals)
}

// Add sums s and o.
func (s WriteStats) Add(o WriteStats) WriteStats {
	return WriteStats{s.Runs + o.Runs, s.Lines + o.Lines, s.Corrections + o.Corrections,
		s.Adjustments + o.Adjustments, s.Checked + o.Checked, s.Accruals + o.Accruals}
}

// Pass kinds: what an ingest pass re-read beyond its window of end times.
const (
	// PassChanges re-read the rows slurmdbd changed (mod_time) since the
	// previous pass of its kind.
	PassChanges = "changes"
	// PassVerify re-read every open period in full and compared it with
	// the ledger.
	PassVerify = "verify"
)

// Pass records the last completed pass of one kind from one source.
type Pass struct {
	Kind   string
	Source string
	// AsOf is the source's clock when the pass read its snapshot: a
	// changes pass has seen every change before it (the next one reads
	// from there); a verification compared everything that ended before it.
	AsOf int64
	// From is where the pass started: the mod_time it read from (changes)
	// or the start of the re-read window (verify).
	From int64
	// Finished is when the pass committed (host clock).
	Finished int64
	// Runs read, lines written and of those corrections.
	Runs, Lines, Corrections int
}

// KindCredit is a credit line (node health: a run that ended NODE_FAIL or
// was killed by a gpubridge drain, booked GPU-hours lost while a booked
// node was held): a negative amount of money, not GPU-seconds, kept in the
// ledger's credit lines (ledger.Credit).
const KindCredit Kind = "credit"
