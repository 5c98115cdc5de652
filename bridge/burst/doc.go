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
//     (ParseRequest) and of the state reasons that count as quota holds;
//   - the marker written into a moved job's admin comment (Marker), which
//     proves that gpubridge moved the job, when and why;
//   - the cost estimate of on-demand work in integer minor units (Cost);
//   - the controller (Controller), a level-triggered periodic job that
//     reads through small interfaces defined here (Jobs, Tenants, Spend,
//     Rates, Store) and writes through Mover. It re-reads everything each
//     cycle, so a restart mid-cycle moves no job twice and loses none.
//
// The adapters live below: slurmjobs (slurmrest), store (MariaDB tables
// burst_moves and burst_refusals, tenant policies, on-demand spend) and
// metrics (Prometheus). This package itself is pure: it must not import
// net/http, database/sql, sqlx, the slurmrest client, the ledger or any
// other adapter; internal/archtest checks it.
package burst
