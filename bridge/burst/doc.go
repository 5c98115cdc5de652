// Package burst is gpubridge's overflow of quota-held jobs to the on-demand
// tier.
//
// A tenant's reserved share is the GrpTRES of its QOS. When a pending job of
// the tenant waits only because that QOS is full (state reason QOSGrpGRES or
// a kin Grp* GRES reason), the burst controller moves it to the on-demand
// partition and the shared on-demand QOS, where it runs preemptably and is
// billed at the on-demand rate. The tenant's burst policy bounds this: it
// must be enabled, the tenant's on-demand GPUs stay within a cap, and the
// month's on-demand spend (booked plus estimated) within a budget.
//
// The package owns:
//   - the pure decision (Decide): given every job slurmctld holds, the
//     tenants, their spend and the on-demand rates, which pending jobs to
//     move and which to refuse, and why (Reason);
//   - the parsing of a job's GPU request from Slurm's TRES strings
//     (ParseRequest), of an array record's pending tasks (ArrayTasks) and
//     of the state reasons that count as quota holds;
//   - the marker written into a moved job's admin comment (Marker), which
//     proves that gpubridge moved the job, when and why;
//   - the cost estimate of on-demand work in integer minor units (Cost),
//     at the rate card's prices (accounting/pricing's Price per GPU-hour);
//   - the mapping of gpubridge tenants to the decision's (TenantsFrom,
//     SourceTenants) and which of them need their spend read: those with a
//     budget (BudgetAccounts);
//   - the controller (Controller), a level-triggered periodic job that
//     reads through small interfaces defined here (JobLister, TenantLister,
//     SpendReader, RateReader) and writes through Mover and Store. It
//     re-reads everything each cycle, so a restart mid-cycle moves no job
//     twice and loses none;
//   - the overview of `show burst` (Summarize): the live plan merged with
//     the refusals the last cycle stored (StoredRefusal).
//
// The adapters live below: slurmjobs (jobs through slurmrest), spend (booked
// on-demand spend and rates from the ledger and rate card), store (the
// burst_moves and burst_refusals tables in MariaDB) and metrics
// (Prometheus); tenants come from bridge/tenantstore or a tenants file.
// cmd/gpubridge/wire assembles the controller from them for the CLI and the daemon.
//
// This package is pure: its rates are the rate card's prices
// (accounting/pricing); Slurm, the ledger and the store are reached through
// the ports above.
package burst
