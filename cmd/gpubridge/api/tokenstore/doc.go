// Package tokenstore keeps the tenant API's tokens: in gpubridge's MariaDB
// database (table api_tokens, migrations 00600-00699 in internal/sqldb)
// through sqlx, or in memory for tests; both pass one conformance suite.
//
// Only a token's hash is stored (cmd/gpubridge/api/token). Adding and deleting a
// token write an audit_log row (object kind "api-token", named
// tenant/name) in the same transaction; a token's last use is recorded
// without one.
package tokenstore
