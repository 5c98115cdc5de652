#!/usr/bin/env bash
# Tenant portal benchmark (issue 28): every portal page (overview, jobs,
# nodes, usage) under 50 concurrent signed-in sessions with 1,000 tenants,
# 10,000 bookings and a month of ledger lines, against a real `gpubridge
# serve` on loopback; goal: each page's server-time p99 < 50 ms. Server time
# is the handler's own time, which the server sends in a Server-Timing
# header (app;dur=): from the request handed to the handler to its status
# (the page rendered), without the kernel's and the client's queues. Each
# session pauses BENCH_THINK (default 1s, uniform 0.5-1.5 s) between pages
# as a person does; a second run without pauses gives the saturation
# figure. Prints the figures, the round trips and the ratio to the goal. Data: a scratch database (gpubridge_portalbench_*),
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
  -lines "${BENCH_LINES:-100000}" -sessions "${BENCH_SESSIONS:-50}" -duration "${BENCH_DURATION:-20s}" -think "${BENCH_THINK:-1s}"
echo "machine after: load $(cut -d' ' -f1-3 /proc/loadavg)"
