// Command synthjobs writes or removes a month of synthetic job rows in the
// testbed's slurmdbd job table, for test/bench/ingest.sh.
//
//	synthjobs insert -month 2026-06 -rows 1000000 -accounts 1000
//	synthjobs delete
//
// It connects with GPUBRIDGE_BENCH_SLURMDB_DSN (read-write on slurm_acct_db)
// and touches only ids [synth.MinJobID, synth.TestIDs) with m4syn accounts.
package main
