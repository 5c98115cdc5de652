// Package store keeps gpubridge's node health records: DB in MariaDB
// (sqlx; the tables health_nodes, health_runs, health_results and
// health_events of migrations 00500-00503, health_tenant_checks of 00551)
// and Memory for tests. Both pass the same conformance suite.
//
// A tenant's run is stored by CreateTenantRun: the tenant's row of
// health_tenant_checks is written first, then its runs of the last hour
// are counted and the run inserted, in one transaction, so the hourly cap
// holds for every process and replica on the database.
//
// Every record write compares and sets the record's version, and finishing
// a run is one transaction that moves the run from submitted to done only
// once, so the daemon and a CLI command that harvest the same run write it
// once. Runs, results and evidence older than the retention are pruned;
// lifecycle events are kept (credits link to them).
//
// It imports bridge/health (the types and the Store port it implements) and
// internal/sqldb; only cmd/ and tests import it.
package store
