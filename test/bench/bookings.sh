#!/usr/bin/env bash
# Bookings benchmark (`make bench`): show availability and find slot over a
# year of 10,000 bookings on 20 types, in process and through the CLI, each
# against a naive scan measured in the same run (goal: < 10 ms in process);
# admission by 50 concurrent clients through the testbed's MariaDB (goal:
# >= 200 decisions/s), against one client. The store is a scratch database
# (gpubridge_bkbench_*), dropped afterwards; nothing is written to Slurm.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
[ -f .testbed/env ] || { echo "bookings bench: .testbed/env missing; run make testbed-up" >&2; exit 1; }
# shellcheck disable=SC1091
source .testbed/env
export TMPDIR=${TMPDIR:-$PWD/.testbed/tmp}; mkdir -p "$TMPDIR"
go build -o "$TMPDIR/gpubridge-bkbench" ./cmd/gpubridge
go build -o "$TMPDIR/bookingbench" ./test/bench/bookingbench
echo "machine: $(nproc) CPU(s), load $(cut -d' ' -f1-3 /proc/loadavg)"
"$TMPDIR/bookingbench" -bin "$TMPDIR/gpubridge-bkbench" -bookings "${BENCH_BOOKINGS:-10000}" -clients "${BENCH_CLIENTS:-50}" -admissions "${BENCH_ADMISSIONS:-3000}"
