// Command portalbench measures the tenant portal's pages on a real
// `gpubridge serve` on loopback (test/bench/portal.sh): 1,000 tenants,
// 10,000 bookings, a month of ledger lines (100 per tenant by default)
// and 50 concurrent sessions, each a tenant's member signed in once
// (the portal's session cookie) loading the overview, jobs, nodes and
// usage pages. It prints each page's p50 and p99 as the client on
// loopback sees them (an upper bound of the server's time) and the ratio
// of the p99 to the goal of 50 ms. Its data lives in a scratch database
// (gpubridge_portalbench_*), bulk-inserted and dropped afterwards; it
// reads slurmrestd (the snapshot's jobs and inventory) and writes nothing
// to Slurm.
package main
