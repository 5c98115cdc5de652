// Package ledger is gpubridge's usage ledger: insert-only lines of GPU-seconds
// per (cluster, job run, period, tier, GPU type, revision), billing periods
// that are open and then closed for good, the replaceable accruals of
// still-running jobs, and the ingest watermark and coverage. [DB] stores it
// in MariaDB (sqlx); [Memory] is an in-memory store for tests; both pass the
// same conformance suite (ledgertest). Its users see it through small
// interfaces shaped by their use (store.go). The rate card is not part of
// the ledger (accounting/ratecard).
//
// # Nothing is counted twice
//
//   - Finished runs: every [meter.Usage] becomes a line whose unique key is
//     (cluster, job id, submit time, usage period, tier, type, revision).
//     Re-ingesting computes the same usage; the ledger compares it with the
//     sum of the key's existing revisions and writes nothing when they are
//     equal. When they differ (Slurm corrected a record), it inserts one
//     more revision holding the difference; a key of a finished run that
//     the measurement no longer has (the run now lasted zero seconds, lost
//     its GPUs or its start, changed tier or type) is reversed to zero.
//     Lines are never updated or deleted, and the sum of a key's revisions
//     is always the latest measurement.
//   - Running runs: their part in periods that have ended is final and is
//     written as lines like any other; their part in the current period is
//     an accrual, kept in a separate table that each ingest replaces as a
//     whole (in one transaction, from one consistent read of the job table),
//     so month-to-date reports include it without it ever entering the
//     ledger. When the run ends, the finished run's lines are written; the
//     lines for earlier periods already exist with the same value, so only
//     the last period is added.
//
// # Booking charges
//
// A booking's charge (meter.BookingCharges: its GPUs × its window per
// month, under the cancellation policy) is a line of its own table,
// booking_charge, keyed (cluster, booking, usage period, GPU type,
// revision), with the same rules as the usage lines: ApplyCharges writes
// the difference between each booking's charge as computed now and the sum
// of its revisions (nothing on a re-run; a correction revision for a
// changed booking; a reversal to 0 for a key it no longer has), booked in
// the first open period; Charges streams them as meter.Lines with Charge
// set. A usage line of a job inside a booking's reservation carries the
// booking's id (usage_ledger.booking), so reports can set use against
// what was booked. Close prices both; its GPUSeconds are the used ones.
//
// # Periods and adjustments
//
// A period (calendar month, UTC) is open until [Close] marks it closed; a
// closed period's lines never change. A line whose usage period is closed
// when it is written (a late record, or a correction) is booked in the first
// open period after it and carries its usage period: an adjustment. Closing
// requires that the period has ended, that an ingest ran after its end
// (watermark and accrual snapshot both past it), and that every line booked
// in it has a rate; it stores the rate card and tenant labels used, so the
// closed period's export is the same bytes forever.
//
// # Watermark, coverage and touched ranges
//
// Each batch of lines commits in one transaction with the source's
// watermark (how far the stream of finished runs, ordered by end time, has
// been written; an unordered source moves it with the window's last batch
// only) and the cluster's coverage (the end-time ranges ingested
// completely, which a close requires). A batch also marks its whole window
// as touched (ingest_touched: it may hold lines from now on), and carries
// the parts of the window no ingest had touched when it began (Fresh): a
// run ending there, that did not cross a period end while running, is
// inserted without a lookup; every other run is compared. After kill -9,
// a rerun writes exactly what is missing.
//
// # Bulk comparison and writes
//
// The runs of a batch that need comparing are compared in bulk: their job
// ids, sorted, become ranges of the primary key (ids close together) and
// single ids, read in one query and folded per run, so re-reading a month
// costs about one scan of its lines. Lines are written with LOAD DATA
// LOCAL INFILE from memory (multi-row INSERTs when a name would need
// escaping or the server refuses LOCAL INFILE); any warning fails the
// batch, since LOCAL turns a duplicate key into one. The cluster's lock is
// a lease (internal/lease): while this store holds it, each write of the
// cluster fences with the lease's epoch in its own transaction, so once
// the lease is lost the write fails with ErrLockLost instead of going on
// without it; each write also fences with the tokens its context carries
// (the daemon's leader lease).
//
// view.go lays out the ledger's state as `show ingest` prints it
// (StateTable, StateText).
package ledger
