// Command bookingbench is the bookings benchmark (test/bench/bookings.sh):
//
//  1. show availability (every type, one year, step 1d) and find slot
//     (count=8 duration=14d) over a year of 10,000 bookings on 20 types,
//     in process, against a naive scan measured in the same run;
//  2. the CLI's wall time for the same two commands (process start, config,
//     slurmrestd reads, the store's read, compute, print) with 10,000
//     bookings stored in a scratch database, of which the testbed pool's
//     types (h100, 1g.10gb, 3g.40gb) are read; against the naive scan of the
//     bookings the CLI reads;
//  3. admission: 50 concurrent clients booking on 20 types through the
//     MariaDB store (per-type lock rows), decisions per second against the
//     goal of 200 and against one client; then a sweep shows that nothing
//     was overbooked.
//
// The scratch database (gpubridge_bkbench_*) is dropped at the end.
package main
