// Package tenantstore keeps gpubridge's tenants in its own MariaDB
// database (tables tenants, tenant_users, tenant_gpus; migrations
// 00100-00199 in internal/sqldb), through sqlx. Every change writes an
// audit_log row (who, when, what, before and after) in the same
// transaction, so a change and its record commit together or not at all.
//
// Every tenant record has a version (1 when created, one more with every
// change). Commit, the write the use cases make (bridge/tenantadmin),
// writes a whole edit (a tenants file: creates, replaces and deletes) in
// one transaction, and refuses it whole with tenant.ErrChanged when a
// record is no longer at the version the edit was computed from: a
// concurrent edit is refused, never lost. Put is the unconditional form
// (tests, benchmarks).
//
// Memory is an in-memory store with the same behaviour, for unit tests;
// tenantstoretest is the conformance suite both pass.
//
// The store keeps the desired state only; what Slurm holds is
// bridge/reconcile's business. This package imports the tenant model and
// internal/sqldb, never the slurmrest client: the use cases reach it
// through their own small interfaces.
package tenantstore
