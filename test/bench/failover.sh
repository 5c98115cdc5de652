#!/usr/bin/env bash
# Failover bench (issue 29): two `gpubridge serve` replicas on one scratch
# database of the testbed's MariaDB, with every job schedule off (nothing is
# written to Slurm); BENCH_REPS times (default 5): kill -9 the replica that
# leads (gpubridge_leader 1 on its /metrics), measure the time until the
# other one leads, start the killed one again. Prints min/median/max and
# their ratio to the goal "two renewal intervals" (2 x 0.75 s) and to the
# leader lease's TTL (3 s): a new leader may not take over before the old
# lease expires (docs/operations.md, Leases).
# Run it through the testbed's lock: test/testbed/use.sh test/bench/failover.sh
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
[ -f .testbed/env ] || { echo "failover bench: .testbed/env missing; run make testbed-up" >&2; exit 1; }
# shellcheck disable=SC1091
source .testbed/env
export TMPDIR=${TMPDIR:-$PWD/.testbed/tmp}; mkdir -p "$TMPDIR"
reps=${BENCH_REPS:-5}
work=$(mktemp -d "$TMPDIR/failbench.XXXXXX")
bin=$work/gpubridge
go build -o "$bin" ./cmd/gpubridge
db=gpubridge_failbench_$$
sql() { "$GPUBRIDGE_TESTBED_EXEC" mysql -h127.0.0.1 -ugpubridge -pgpubridge -e "$1"; }
declare -a pids=(0 0)
cleanup() {
  for p in "${pids[@]}"; do
    if [ "$p" != 0 ]; then kill -9 "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; fi
  done
  sql "DROP DATABASE IF EXISTS $db" || true
  rm -rf "$work"
}
trap cleanup EXIT
sql "CREATE DATABASE $db"
export GPUBRIDGE_DB_DSN="gpubridge:gpubridge@tcp(127.0.0.1:3306)/$db?parseTime=true&loc=UTC"
cat >"$work/config.yaml" <<'YAML'
version: 1
schedules:
  reconcile: ""
  burst: ""
  ingest: ""
  closePeriod: ""
  bookings: ""
YAML
"$bin" --config "$work/config.yaml" migrate >/dev/null
base=$((20000 + $$ % 20000))
metrics() { echo "127.0.0.1:$((base + 2 * $1 + 1))"; }
start() {
  GPUBRIDGE_LISTEN=127.0.0.1:$((base + 2 * $1)) GPUBRIDGE_METRICS_LISTEN=$(metrics "$1") \
    "$bin" --config "$work/config.yaml" serve >>"$work/r$1.log" 2>&1 &
  pids[$1]=$!
}
leads() { curl -s --max-time 1 "http://$(metrics "$1")/metrics" 2>/dev/null | grep -q '^gpubridge_leader 1'; }
now() { date +%s.%N; }
start 0; start 1
echo "machine: $(nproc) CPU(s), load $(cut -d' ' -f1-3 /proc/loadavg)"
times=()
for ((i = 1; i <= reps; i++)); do
  leader=-1
  deadline=$(( $(date +%s) + 30 ))
  while ((leader < 0)); do
    for r in 0 1; do if leads "$r"; then leader=$r; fi; done
    if (($(date +%s) > deadline)); then echo "failover bench: no replica leads after 30 s (logs: $work)" >&2; tail -5 "$work"/r*.log >&2; exit 1; fi
    ((leader >= 0)) || sleep 0.05
  done
  other=$((1 - leader))
  sleep 1 # let the standby settle into its campaign loop
  t0=$(now)
  kill -9 "${pids[$leader]}"; wait "${pids[$leader]}" 2>/dev/null || true
  until leads "$other"; do
    if (($(date +%s) > ${t0%.*} + 30)); then echo "failover bench: replica $other did not lead within 30 s" >&2; exit 1; fi
    sleep 0.02
  done
  dt=$(echo "$(now) - $t0" | bc -l)
  printf 'run %d: replica %d killed, replica %d leads after %.2f s\n' "$i" "$leader" "$other" "$dt"
  times+=("$dt")
  start "$leader"
done
printf '%s\n' "${times[@]}" | sort -n | awk -v reps="$reps" '
  { v[NR] = $1 }
  END {
    med = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "failover over %d kills: min %.2f s, median %.2f s, max %.2f s\n", NR, v[1], med, v[NR]
    printf "vs the goal 2 renewal intervals (1.5 s): min %.2fx, median %.2fx, max %.2fx\n", v[1] / 1.5, med / 1.5, v[NR] / 1.5
    printf "vs the leader lease TTL (3 s): min %.2fx, median %.2fx, max %.2fx\n", v[1] / 3, med / 3, v[NR] / 3
  }'
echo "machine after: load $(cut -d' ' -f1-3 /proc/loadavg)"
