#!/usr/bin/env bash
# Tenants benchmark (`make bench`): gpubridge apply of BENCH_TENANTS tenants
# (default 1,000) with BENCH_USERS users each (default 3) on the testbed:
# cold apply time, no-op apply time, slurmrestd reads and writes; beside the
# equivalent loop of one `sacctmgr -i add ...` per object timed in the same
# run, on BENCH_SACCTMGR_TENANTS tenants (default 200; 0 = all, about 5 minutes
# for 1,000) and extrapolated, explicitly labelled, when that is a sample.
# Goals: no-op apply <= 3 reads and 0 writes; cold apply >= 10x faster.
# Objects are named t3b* (t3bs* for the sacctmgr loop) and removed afterwards;
# the store is a scratch database (gpubridge_t3bbench), dropped afterwards.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
[ -f .testbed/env ] || { echo "tenants bench: .testbed/env missing; run make testbed-up" >&2; exit 1; }
# shellcheck disable=SC1091
source .testbed/env
export TMPDIR=${TMPDIR:-$PWD/.testbed/tmp}; mkdir -p "$TMPDIR"
bin=$TMPDIR/tenantbench
go build -o "$bin" ./test/bench/tenantbench
"$bin" -tenants "${BENCH_TENANTS:-1000}" -users "${BENCH_USERS:-3}" -sacctmgr-tenants "${BENCH_SACCTMGR_TENANTS:-200}"
