// Package meter turns a Slurm job run into GPU-seconds per billing period,
// tier and GPU type. It is pure: no I/O, no clock (callers pass "as of").
//
// # Rules (docs/chargeback.md explains them for finance)
//
//   - A job run is one row of slurmdbd's job table, identified by
//     (cluster, job id, submit time): a requeue or a job id reused after the
//     id space wraps gives a new run with its own submit time.
//   - GPU-seconds of a run and GPU type = allocated count × seconds of
//     [time_start, time_end) clipped to the period. Periods are calendar
//     months in UTC ([Period]); a run crossing 00:00:00 UTC on the 1st is
//     split there. A run that never started, or whose end equals its start
//     (cancelled while pending), costs nothing and yields no usage. A run
//     whose record Slurm later corrects to that (or strips of its GPUs)
//     still reaches the ledger as a [MeasuredRun] without usages, so its
//     earlier lines are reversed ([Run.CrossedPeriodEnd] says whether an
//     ingest may have written lines for it before it ended).
//   - A run still running "as of" T is measured to T. Its parts in periods
//     that ended at or before T are final (they can no longer change unless
//     Slurm corrects the record, which the ledger turns into an adjustment);
//     the part in the period containing T is an accrual ([Usage.Final] is
//     false) that the next ingest replaces rather than adds to.
//   - Tier: a run is [OnDemand] when it ran in the on-demand partition or
//     under the on-demand QOS ([TierRules]), else [Reserved].
//   - A run inside a booking's Slurm reservation (named BookingPrefix and
//     the booking id, [TierRules]) is tier [Booked], with the booking on its usage
//     ([Usage.Booking]); it is priced at 0, since the booking's charge
//     paid for those GPUs.
//   - Suspended time is not subtracted: a suspended job keeps its GPUs.
//   - A booking's charge ([BookingCharges]) is its GPUs × its window,
//     split at month boundaries like a run; a cancelled booking is charged
//     up to [Cancellation.ChargedEnd] (free with FreeBefore of notice,
//     otherwise from its start to FreeBefore after the cancel time).
//
// The ledger stores [Line]s: a [Usage] plus the booking information
// (revision, booked period). Money is not computed here (see pricing).
//
// It is pure: no database, HTTP or adapter.
package meter
