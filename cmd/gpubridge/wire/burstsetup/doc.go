// Package service holds the burst use cases that every front end calls:
// the daemon's burst job, `gpubridge burst run-once` and `show burst` (and
// the coming tenant API), so that none of them repeats a rule.
//
// New assembles the controller (bridge/burst.Controller) from the
// configuration and its adapters: slurmjobs over the slurmrest client, the
// tenant store or a tenants file, spend over the ledger (read only for the
// tenants with a budget) and the stored or a given rate card, and the burst
// tables (store). The Service it returns runs cycles (Run, Cycle), decides
// without moving (Plan) and builds the overview of `show burst` (Overview:
// the live plan merged with the stored refusals).
//
// It is the assembly layer: it may import burst, its adapters (slurmjobs,
// spend, store), bridge/tenant, bridge/tenantstore, accounting/ledger,
// accounting/pricing, cmd/gpubridge/config and sqlx. Only cmd/ and tests import
// it; it must not import cmd/ or cmd/gpubridge/daemon.
package burstsetup
