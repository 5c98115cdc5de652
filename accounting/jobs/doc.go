// Package jobs holds the accounting's periodic daemon jobs (STYLE rule 9):
// [Ingest] runs an incremental ingest every few minutes; [ClosePeriod]
// closes the previous billing period on its schedule (config
// schedules.closePeriod, by default 03:00 UTC on the 2nd: one day of grace
// for late records). Both are types with Run(ctx) error, scheduled by
// robfig/cron/v3 with SkipIfStillRunning in `gpubridge serve`, and tested
// by calling Run with an injected clock.
//
// It wires ingest and the ledger.
package jobs
