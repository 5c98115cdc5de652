// Package tenant is gpubridge's tenant model: what a tenant is (name,
// description, organization, users, admins, GPU quota per type and MIG
// profile, optional CPU and memory limits, burst policy), how its fields are
// written on the command line and in YAML files, how it is validated, and
// which Slurm objects it becomes (Project) — the account under root, the
// tenant QOS holding GrpTRES per GPU type, user associations and
// coordinators — plus the data file read by contrib/job_submit.lua (Guard).
//
// Validation reports every problem at once, each naming its field and the
// fix; nothing is written anywhere when any problem is found.
//
// This package is pure: it does no I/O and must not import net/http,
// database/sql, sqlx, the slurmrest client or any other adapter
// (internal/archtest enforces this). The store lives in bridge/tenantstore,
// the diff against the live cluster in bridge/reconcile. Importers:
// cmd/gpubridge, bridge/reconcile and its adapter, bridge/tenantstore,
// bridge/burst and test/bench.
package tenant
