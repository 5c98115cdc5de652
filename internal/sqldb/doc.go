// Package sqldb opens gpubridge's own MariaDB database through sqlx and
// go-sql-driver/mysql, applies its embedded numbered migrations (goose), and
// offers the one transaction helper, WithTx.
//
// Inspect says what a database holds (empty, gpubridge's schema, or
// someone else's tables) and Prepare acts on it by a Policy: pending
// migrations are applied to a gpubridge schema, the schema is created in
// an empty database only when the policy allows it (ErrNoSchema
// otherwise), and a foreign database is never touched (ErrForeignSchema).
//
// Migrations live in migrations/ as NNNNN_name.sql, one version range per
// feature so parallel work never collides:
//
//	00001-00099 shared (audit log)
//	00100-00199 tenants          00200-00299 ledger and pricing
//	00300-00399 burst            00400-00499 reservations
//	00500-00599 node health
//
// MariaDB DDL commits implicitly, so each migration must be safe on its own
// (one statement per migration where possible, IF NOT EXISTS where not).
//
// Only the stores (accounting/ledger, bridge/tenantstore, bridge/burst/store),
// cmd/gpubridge, cmd/gpubridge/daemon and test code import it; pure packages
// never do.
package sqldb
