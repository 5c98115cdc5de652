// Package reserve is gpubridge's booking ledger: tenants book GPU capacity
// (N GPUs of a type or MIG profile, or N whole nodes of a node class) for a
// window, and gpubridge guarantees that what it admits fits.
//
// It owns, as pure logic (no I/O):
//   - the booking model (Booking, its states and its Slurm projection
//     record), with half-open UTC windows [Start, End) at second resolution;
//   - capacity (Capacities): per resource, what slurmctld reports for the
//     pool's nodes, minus drained or down nodes, admin maintenance windows,
//     reservations gpubridge does not own and the configured unbookable
//     share;
//   - the calendar (Calendar): the committed count and the capacity at every
//     instant, as a step function built in O(n log n); free capacity over a
//     window, shortfalls, the earliest windows of a shape that fit
//     (FindSlots) and the availability timeline;
//   - placement (Place): a model of the GPUs Slurm gives each reservation
//     (per node, per GPU index, lowest free for the whole window), so that
//     admission refuses what no placement holds where GPUs fragment, and the
//     projector re-creates reservations that have not started, in start
//     order, when Slurm refuses one for lack of room;
//   - admission (Check): whether a booking fits on top of the others, and
//     when it does not, a Refusal naming the conflicts (the own tenant's in
//     full, other tenants' only as counts), the shortfall per interval and
//     the next window of the same shape that fits; tenant booking policy
//     (Policy) and its validation;
//   - times (ParseTime, ParseDuration, FormatTime): RFC 3339, now+2d, and
//     zone-less dates in the admin's time zone with daylight-saving gaps
//     and ambiguities refused;
//   - the Slurm projection plan (PlanProjection): one reservation
//     `<prefix><id>` per booking, IGNORE_JOBS, never OVERLAP, created
//     Settings.LeadTime ahead of its start; drift repair and orphan removal;
//     at-risk moves: a booking on a node that is down or drained (or whose
//     reservation Slurm moved off such a node without its GPUs) is
//     recreated on healthy capacity when the ledger has room for the rest of
//     its window (never while jobs run inside), else kept and marked at
//     risk with why; Report.Now is the pool per resource for metrics;
//   - the use cases (Service: add, modify, cancel, show, availability, find
//     slot, maintenance) and the reconcile step (Projector.Project), over
//     small ports defined here: Store, Source, Tenants, Slurm.
//
// Atomic admission is the Store's promise: Store.Atomic runs the check and
// the insert in one transaction that holds a lock per resource, so the sum
// of overlapping bookings never exceeds capacity at any instant, across
// processes and daemon replicas. Adapters: bridge/reserve/store (MariaDB and
// in-memory), bridge/reserve/slurmadapter (slurmrestd).
//
// Resources are named "gpu:<type>" and "node:<class>". A whole-node booking
// commits both its nodes (on the class) and their GPUs (on each type), so
// GPU and node bookings never overcommit each other.
//
// A tenant's booking policy lives in its spec (bridge/tenant.BookingPolicy,
// its keys over Settings.DefaultPolicy) and reaches the Service through
// the Tenants port, with the GPU types its jobs may request; the per-tenant
// reservation QOS that jobs inside a booking run under is the tenant's
// (bridge/tenant Project) and the job_submit guard's switch to it is
// contrib/job_submit.lua's. The readers of the commands' typed arguments
// (ParseAdd, ParseChange, ParseList, ParseAvailability, ParseSlotQuery,
// ParseMaintenance) are here too, for every front end. Subpackages: store,
// slurmadapter, metrics (Prometheus collectors of Reports), setup (the use
// cases of a configuration, the daemon's projection job), view (tables,
// timeline, audit lines and messages for people), reservetest.
//
// This package must not import net/http, database/sql, sqlx, the slurmrest
// client or any other adapter (internal/archtest keeps it so).
package reserve
