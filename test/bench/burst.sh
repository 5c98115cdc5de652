#!/usr/bin/env bash
# Burst controller benchmark (`make bench`).
#  1. Synthetic: one controller cycle with 10,000 pending (+2,000 running)
#     jobs: the real slurmrest client, adapter and controller against a
#     stand-in slurmrestd that serves the job JSON recorded from the
#     testbed's slurmrestd 26.05, replicated, and answers update_time as
#     slurmctld does. Prints the phases (the stand-in's serving, our decode,
#     conversion and decision: goal <= 0.3 s), the read when nothing changed,
#     the cycle's wall time and REST calls, peak RSS beyond the body (goal
#     <= 128 MiB), and the earlier read (ListJobs, two decodes) as the peer
#     with the ratio.
#  2. Live: the testbed with BURST_BENCH_HELD held jobs (default 2000,
#     submitted --hold through slurmrestd, one job each so that slurmctld
#     holds that many job records), cancelled afterwards: slurmrestd's time
#     and ours apart, and the alternatives (update_time, jobs/state/ plus one
#     job's details per candidate).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
[ -f .testbed/env ] || { echo "burst bench: .testbed/env missing; run make testbed-up" >&2; exit 1; }
# shellcheck disable=SC1091
source .testbed/env
export TMPDIR=${TMPDIR:-$PWD/.testbed/tmp}; mkdir -p "$TMPDIR"
N=${BURST_BENCH_HELD:-2000}
ACCT=b5bench
IN=test/testbed/in-root.sh
bin=$TMPDIR/burstbench
go build -o "$bin" ./test/bench/burstbench

echo "-- synthetic: one cycle, 10,000 pending jobs"
"$bin" -pending 10000 -running 2000 -tenants 100 -reps 3

echo "-- live: $N held jobs on the testbed"
$IN sacctmgr -i add account $ACCT parent=root >/dev/null 2>&1 || true
$IN sacctmgr -i add user alice account=$ACCT >/dev/null 2>&1 || true
cleanup() { $IN scancel -A $ACCT >/dev/null 2>&1 || true; }
trap cleanup EXIT
cleanup
"$bin" -live -reps 5 -submit "$N" -account $ACCT -user alice
