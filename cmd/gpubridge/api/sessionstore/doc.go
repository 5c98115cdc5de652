// Package sessionstore keeps the portal's sessions in gpubridge's MariaDB
// database (table portal_sessions, migration 00620 in internal/sqldb), so
// that every replica of serve knows every session and a restart signs
// nobody out. A session is found by the SHA-256 of its id: the table
// never holds an id a browser could present. Only cmd/gpubridge/wire imports it,
// plugging it into the API's SessionStore port.
package sessionstore
