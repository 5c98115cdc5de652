#!/usr/bin/env bash
# Tenant API benchmark (`make bench`): p99 of the tenant routes under 50 concurrent clients
# with 100 tenants x 10,000 ledger lines (goal < 50 ms), and a /metrics scrape at 1,000
# tenants x 5 GPU types (goal < 200 ms), against a real `gpubridge serve` on loopback; each
# figure is printed with its ratio to the same server's /healthz measured in the same run.
# Then the attack (issue 25): 50 clients with read tokens ask the largest answers the API
# allows for a minute (BENCH_ATTACK) against a serve with the default limits, while other
# tenants' clients use their routes: serve's peak RSS (bound 256 MiB) and their p99 (< 100 ms).
# Data: a scratch database (gpubridge_apibench_*), dropped afterwards; nothing is written to Slurm.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
[ -f .testbed/env ] || { echo "api bench: .testbed/env missing; run make testbed-up" >&2; exit 1; }
# shellcheck disable=SC1091
source .testbed/env
export TMPDIR=${TMPDIR:-$PWD/.testbed/tmp}; mkdir -p "$TMPDIR"
go build -o "$TMPDIR/gpubridge-apibench" ./cmd/gpubridge
go build -o "$TMPDIR/apibench" ./test/bench/apibench
echo "machine: $(nproc) CPU(s), load $(cut -d' ' -f1-3 /proc/loadavg)"
"$TMPDIR/apibench" -bin "$TMPDIR/gpubridge-apibench" -tenants "${BENCH_TENANTS:-100}" -lines "${BENCH_LINES:-10000}" \
  -clients "${BENCH_CLIENTS:-50}" -duration "${BENCH_DURATION:-20s}" -scale-tenants "${BENCH_SCALE_TENANTS:-1000}" \
  -attack "${BENCH_ATTACK:-60s}" -attackers "${BENCH_ATTACKERS:-50}"
echo "machine after: load $(cut -d' ' -f1-3 /proc/loadavg)"
