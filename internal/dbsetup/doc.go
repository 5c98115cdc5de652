// Package dbsetup renders the SQL that prepares MariaDB for gpubridge: its
// own database and user (tenants, bookings, ledger, audit), and a read-only
// user for slurmdbd's database (ingest reads slurm_acct_db and must never
// write it). `gpubridge init-db` prints it for an administrator to run;
// contrib/sql/setup.sql is the same SQL with placeholder passwords.
//
// It is pure: it builds statements from names and passwords and imports no
// database driver (cmd/gpubridge/app parses the DSNs, the administrator's
// mariadb client runs the statements). Schema migrations are not here: they
// are embedded in internal/sqldb and run by gpubridge itself.
package dbsetup
