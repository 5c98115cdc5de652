#!/usr/bin/env bash
# Tenant portal benchmark (issue 28): every portal page (overview, jobs,
# nodes, usage) under 50 concurrent signed-in sessions with 1,000 tenants,
# 10,000 bookings and a month of ledger lines, against a real `gpubridge
# serve` on loopback; goal: each page's p99 < 50 ms. Prints the figures and
# their ratio to the goal. Data: a scratch database (gpubridge_portalbench_*),
# bulk-inserted and dropped afterwards; nothing is written to Slurm.
# Run it through the testbed's lock: test/testbed/use.sh test/bench/portal.sh
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
[ -f .testbed/env ] || { echo "portal bench: .testbed/env missing; run make testbed-up" >&2; exit 1; }
# shellcheck disable=SC1091
source .testbed/env
export TMPDIR=${TMPDIR:-$PWD/.testbed/tmp}; mkdir -p "$TMPDIR"
go build -o "$TMPDIR/gpubridge-portalbench" ./cmd/gpubridge
go build -o "$TMPDIR/portalbench" ./test/bench/portalbench
echo "machine: $(nproc) CPU(s), load $(cut -d' ' -f1-3 /proc/loadavg)"
"$TMPDIR/portalbench" -bin "$TMPDIR/gpubridge-portalbench" -tenants "${BENCH_TENANTS:-1000}" -bookings "${BENCH_BOOKINGS:-10000}" \
  -lines "${BENCH_LINES:-100000}" -sessions "${BENCH_SESSIONS:-50}" -duration "${BENCH_DURATION:-20s}"
echo "machine after: load $(cut -d' ' -f1-3 /proc/loadavg)"
