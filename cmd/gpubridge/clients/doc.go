// Package clients builds the connections gpubridge's configuration names:
// the slurmrestd client, gpubridge's own database and slurmdbd's
// database (slurm_acct_db, read-only). The CLI and the daemon build them
// here, the same way.
//
// A Set makes its clients at once, and none connects before its first
// use: the slurmrestd client negotiates its API version on its first
// request (and again after a request found no server), a database pool
// connects at its first statement, and the pool of gpubridge's own
// database checks its schema before it hands out its first connection
// (and again after a failed check). So services and jobs are built on them
// eagerly, as plain values; a command or the daemon starts while slurmrestd
// or MariaDB is down, and a failed use is tried again at the next. Derive makes the
// Set of a reloaded configuration: it keeps every client whose settings
// (including the contents of the JWT key, token and their files) are
// unchanged and makes the others anew; the caller closes what the old Set
// no longer shares.
//
// A Set's Cluster is the handle of the cluster its configuration serves:
// the name (cluster:, else the one slurmrestd reports, resolved once per
// Set, that is per configuration generation), the slurmrestd client, the
// slurmdbd pool, the pool partition and the sacctmgr runner. Every
// service and job takes the cluster's name from it; nothing else reads
// config.Cluster. Serving several clusters is a map of handles.
//
// gpubridge's database is checked before its first connection is used
// (sqldb.Prepare): a database
// with no gpubridge schema is initialised only when the Set's policy says
// so, and a database holding other tables is refused.
//
// It is an edge package: it imports adapters (slurmrest, sqldb) and the
// configuration, and is imported by cmd/gpubridge and cmd/gpubridge/daemon only.
package clients
