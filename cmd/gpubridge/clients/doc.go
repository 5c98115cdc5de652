// Package clients builds the connections gpubridge's configuration names:
// the slurmrestd client, gpubridge's own database and slurmdbd's
// database (slurm_acct_db, read-only). The CLI and the daemon build them
// here, the same way.
//
// A Set builds each client lazily, on its first use, so that a command or
// the daemon starts while slurmrestd or MariaDB is down, and a failed
// build is tried again at the next use. Derive makes the Set of a reloaded
// configuration: it keeps every built client whose settings (including the
// contents of the JWT key, token and their files) are unchanged and builds
// the others anew; the caller closes what the old Set no longer shares.
//
// gpubridge's database is checked before use (sqldb.Prepare): a database
// with no gpubridge schema is initialised only when the Set's policy says
// so, and a database holding other tables is refused.
//
// It is an edge package: it imports adapters (slurmrest, sqldb) and the
// configuration, and is imported by cmd/gpubridge and cmd/gpubridge/daemon only.
package clients
