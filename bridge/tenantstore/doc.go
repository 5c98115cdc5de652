// Package tenantstore keeps gpubridge's tenants in its own MariaDB
// database (tables tenants, tenant_users, tenant_gpus; migrations
// 00100-00199 in internal/sqldb), through sqlx. Every change writes an
// audit_log row (who, when, what, before and after) in the same
// transaction, so a change and its record commit together or not at all.
//
// The store keeps the desired state only; what Slurm holds is
// bridge/reconcile's business. This package imports the tenant model and
// internal/sqldb, never the slurmrest client; only cmd/gpubridge and
// test/bench import it.
package tenantstore
