// Package health is gpubridge's node health: acceptance checks before a
// node serves tenants, drains and resumes, scheduled and triggered checks,
// all run as Slurm jobs.
//
// It owns:
//   - the lifecycle of a node (State): new, burn-in, serving, suspect,
//     drained, requalify, and external for a node drained or down for a
//     reason not gpubridge's. Observe (what slurmctld reports), Apply (a
//     finished run's results) and Reconcile (the actions that make Slurm
//     match a record) are pure and level-triggered. gpubridge owns exactly
//     the node reasons that start with "gpubridge:" and never resumes
//     another's drain;
//   - how checks run on a node tenants must not use: the node's health
//     reservation (FenceName: whole node, MAINT, IGNORE_JOBS, for the health
//     service user only) keeps tenants off while gpubridge holds it; the
//     node is resumed behind it only until an acceptance run's job starts,
//     and drained again at once;
//   - the service (Service, over the small ports in ports.go and
//     history.go: NodeControl, JobRunner, Outputs, Store, TenantUsage,
//     TenantHistory, Bookings, BookingMover, Observer): one job per
//     schedule for the daemon (Scheduled, Job; Harvest between cycles),
//     each Cycle harvesting the runs whose jobs ended, moving the
//     lifecycle, submitting the schedule's checks within a cap, and handing
//     the nodes it held or released to the booking projector (Mover) once
//     Slurm shows the change; tenants' and admins' checks (Trigger,
//     CheckNow: a tenant only on the nodes it uses, rate-limited; a
//     two-node check on a node and its peer, one job on both, the result
//     each node's); the admin override (ResumeNode, audited); the views of
//     show health, show checks and a tenant's history of the nodes it used
//     (TenantHistory: its spans, the nodes' events and the scheduled and
//     its own check results then, never another tenant's), laid out in
//     view.go.
//
// The service's files go by concern: service.go (settings, construction),
// schedule.go (the daemon's jobs, a schedule's submissions), cycle.go (a
// cycle and a harvest, re-projecting bookings), snapshot.go (one cycle's
// reading of Slurm and the store), harvest.go (finishing a run whose job
// ended), reconcile.go (records from and to Slurm, settling acceptance
// runs), submit.go (one run's job), trigger.go (tenants' and admins'
// checks).
//
// Check definitions and parsers live in check, credits in credit, the
// MariaDB store in store, the Slurm adapter in slurmadapter, Prometheus
// collectors in metrics, a fake Slurm for tests in healthtest.
//
// This package is pure: it must not import net/http, database/sql, sqlx,
// os/exec, the slurmrest client or any adapter (internal/archtest).
package health
