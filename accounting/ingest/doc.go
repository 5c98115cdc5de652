// Package ingest reads job runs from Slurm's accounting and writes their GPU
// use to the ledger.
//
// Sources ([Source]):
//
//   - [SlurmDB] reads slurmdbd's MariaDB database (slurm_acct_db) through a
//     read-only user, in one read-only REPEATABLE READ transaction, so the
//     running runs and the finished runs come from one consistent snapshot.
//     Finished runs are selected by time_end (indexed; mod_time is not) and
//     streamed row by row, every row of the window in the job table's own
//     order ([Unordered]): neither a filter on tres_alloc nor a sort, each
//     of which costs the server more than sending the rows; memory stays
//     constant however many rows the window holds. GPU TRES ids are read
//     from tres_table at every ingest (deleted rows too: a job keeps the
//     ids it ran under), QOS names from qos_table and users from the
//     association table.
//   - [REST] reads slurmrestd's /slurmdb/jobs in adaptive time windows
//     (show_duplicates, skip_steps) for sites without database access. It is
//     much slower (see docs/chargeback.md) and meant for incremental ingests.
//     A window slurmdbd refuses (MaxQueryTimeRange, result too large) or
//     whose answer exceeds the client's size bound is halved down to
//     MinWindow, then the ingest fails with [ErrWindowRefused].
//
// Purged rows: before the SlurmDB source reads a window, it compares
// slurmdbd's hourly rollups with the job rows for the hours past the
// watermark (purge.go). GPU use that the rollups hold and no job row
// accounts for (rows purged by PurgeJobAfter, or deleted, before they were
// ingested) fails the ingest with [ErrMissingRows] before anything is
// written, unless the operator accepted the gap for those hours
// ([Ingester.AcceptMissing], audited); it is never billed as zero.
//
// Reservations: a run's reservation comes from the job row's id_resv,
// resolved through <cluster>_resv_table (a row per version, all with its
// name), or slurmrestd's reservation.requested; meter.TierRules makes a
// run inside a booking's reservation tier booked. A job row naming a
// reservation id the table lacks fails the ingest ([ErrUnknownReservation]),
// and so does a tres_alloc entry that is not id=count ([ErrMalformedTRES]):
// either could bill the run wrongly, silently.
//
// Both produce the same [meter.Run]s, so the ledger is the same whichever
// source wrote it.
//
// GPU allocations come from tres_alloc: typed entries (gres/gpu:h100,
// gres/gpu:1g.10gb) are counted per type; the untyped gres/gpu entry is
// used only when no typed entry exists (then the type is "gpu"), so a GPU is
// never counted twice.
//
// [Ingester] runs one ingest: it takes the ledger lock, reads the running
// runs and replaces the accruals, then streams the finished runs of the
// window to the ledger in batches. An ordered source's batches commit the
// watermark as they go; an unordered one's window is touched (it may hold
// lines) with its first batch and covered, with the watermark, by its
// last, so a killed ingest leaves no half-covered period and the next one
// compares what is there.
//
// What Slurm changes later reaches the ledger three ways ([Ingester.
// Scheduled], the daemon's ingest job), each a bulk comparison in the
// ledger, with lines that bring every key to its new measurement (a run
// corrected to zero length, or that lost its GPUs or its start, is
// reversed to zero; a closed period's difference is an adjustment in the
// open one):
//
//   - every ingest looks up by key ([Query.Lookup]) the runs that were
//     running at the last ingest (the accruals' runs) and are neither
//     running nor in the window now: a late end record (slurmdbd was down
//     when the job ended; its end is days old), a runaway job fixed with
//     `sacctmgr show runawayjobs` (end set to start, mod_time untouched);
//   - every hour a changes pass re-reads the rows whose mod_time is at or
//     after the previous pass ([Query.ChangedSince]; one full scan of the
//     job table) and that ended before the window;
//   - every day a verification re-reads the open periods in full.
//
// The passes are recorded in the ledger (meter.Pass), so `gpubridge show
// ingest` can say how far each got.
//
// Clock: an ingest measures as of the source's clock (slurm_acct_db's
// server, slurmctld), not the host's, so a host whose clock is off writes
// the same ledger and cannot mark a period covered before it ended where
// the records come from ([Clocked], [Ingester.UseHostClock]).
//
// It reaches the ledger only through [Ledger], and slurmrestd through the
// slurmrest client (the REST source). view.go holds what the ingest
// command prints: the summary of a result and its progress bar.
package ingest
