// Command ingestprof runs one slurmdb ingest, as `gpubridge ingest` does,
// and says where its wall time went: the reader (time inside the source's
// read, and how much of it the reader spent handing batches to the
// writer), the writer (time in ApplyBatch, and idle), with optional CPU
// profile and execution trace, for test/bench/ingest.sh's profiling runs.
//
//	ingestprof -from 2026-06-01T00:00:00 -to 2026-07-01T00:00:00 -cpuprofile cpu.out -trace trace.out
//
// It reads GPUBRIDGE_SLURMDB_DSN, GPUBRIDGE_DB_DSN (migrated on open) and
// GPUBRIDGE_CLUSTER.
package main
