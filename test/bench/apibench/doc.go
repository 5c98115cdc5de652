// Command apibench measures the tenant API of a real `gpubridge serve` on
// loopback (test/bench/api.sh): the p99 latency of the tenant routes with
// 100 tenants and 10,000 ledger lines under 50 concurrent clients, and a
// /metrics scrape with 1,000 tenants of 5 GPU types, each against the same
// server's /healthz measured in the same run; then the attack of issue 25
// (attack.go): 50 clients with read tokens asking the largest answers the
// API allows for a minute, with serve's peak RSS and the p99 of the other
// tenants' requests meanwhile. Its data lives in a scratch
// database (gpubridge_apibench_*), dropped afterwards; it reads slurmrestd
// (the snapshot's jobs and inventory) and writes nothing to Slurm.
package main
