#!/usr/bin/env bash
# Tenants benchmark (`make bench`): on the testbed, in the same run,
#   - gpubridge: cold apply of BENCH_TENANTS tenants (default 1,000) with
#     BENCH_USERS users each (default 3), each tenant with its own description
#     and organization (BENCH_SAME_DESCRIPTION=1: all the same), a no-op apply,
#     and deleting them all, with reconcile.sacctmgr set (the testbed's
#     sacctmgr); slurmrestd reads and writes and sacctmgr commands of each;
#     then the cold apply and delete again with slurmrestd only (skipped with
#     BENCH_SKIP_REST=1);
#   - the fast peer, sacctmgr with the same tenants: one `sacctmgr add qos` of
#     every QOS plus one `sacctmgr load` of a flat file (cold), the same load
#     again (no-op), and `sacctmgr delete account` + `delete qos` of all of them
#     (one command each);
#   - the slow peer, one `sacctmgr -i add` per object, on BENCH_SACCTMGR_TENANTS
#     tenants (default 100; 0 = all), extrapolated (and labelled so) when that is
#     a sample.
# It prints each ratio and whether its goal is met (cold <= sacctmgr load;
# no-op <= 0.5 s, 0 writes and <= 1/10 of sacctmgr's no-op load; delete <= 2x
# sacctmgr's delete), and the machine load at start and end.
# BENCH_CPUPROFILE=FILE writes a CPU profile of the no-op apply.
# Objects are named t3b* (t3bs* for the loop) and removed afterwards; the store
# is a scratch database (gpubridge_t3bbench), dropped afterwards. About 2-3
# minutes at 1,000 tenants: run it inside test/testbed/use.sh.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
[ -f .testbed/env ] || { echo "tenants bench: .testbed/env missing; run make testbed-up" >&2; exit 1; }
# shellcheck disable=SC1091
source .testbed/env
export TMPDIR=${TMPDIR:-$PWD/.testbed/tmp}; mkdir -p "$TMPDIR"
bin=$TMPDIR/tenantbench
go build -o "$bin" ./test/bench/tenantbench
args=(-tenants "${BENCH_TENANTS:-1000}" -users "${BENCH_USERS:-3}" -sacctmgr-tenants "${BENCH_SACCTMGR_TENANTS:-100}")
[[ ${BENCH_SAME_DESCRIPTION:-} == 1 ]] && args+=(-same-description)
[[ ${BENCH_SKIP_REST:-} == 1 ]] && args+=(-skip-rest)
[[ -n ${BENCH_CPUPROFILE:-} ]] && args+=(-cpuprofile "$BENCH_CPUPROFILE")
"$bin" "${args[@]}"
