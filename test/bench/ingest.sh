#!/usr/bin/env bash
# Benchmark: ingest + price + export of a month of synthetic jobs, against
# sacct reading the same month, measured in the same run.
#
# For each size (default 100000 and 1000000 rows; 40% with GPUs, 5% with MIG
# slices, 1,000 accounts) it writes the rows into the testbed's job table
# (month 2026-06, ids 900000000+, accounts m4syn*), then measures with
# /usr/bin/time -v:
#   ours:  gpubridge ingest (slurm_acct_db -> ledger, on a scratch database)
#          gpubridge export chargeback format=focus (price every line + the FOCUS chargeback)
#          and, shown separately, format=csv detail=jobs (every job line item)
#   sacct: TZ=UTC sacct -a -P -D -X --noconvert -S .. -E .. -o <our fields>
# and prints wall time, peak RSS and the ratio. The synthetic rows and the
# scratch database are removed at the end, also on failure.
#
# Usage: test/bench/ingest.sh [ROWS...]      (needs the testbed: make testbed-up)
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
# shellcheck disable=SC1091
source .testbed/env
export TMPDIR=${TMPDIR:-$PWD/.testbed/tmp} GOFLAGS=${GOFLAGS:--mod=mod} CGO_CFLAGS=${CGO_CFLAGS:--Wno-deprecated-declarations}
mkdir -p "$TMPDIR"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100000 1000000)
MONTH=2026-06 FROM=2026-06-01T00:00:00 TO=2026-07-01T00:00:00
IN=test/testbed/in-root.sh
work=$(mktemp -d "$TMPDIR/bench-ingest.XXXXXX")
scratch=gpubridge_m4_bench
mysql_root() { $IN mariadb -u root -N -B "$@"; }

go build -o "$work/gpubridge" ./cmd/gpubridge
go build -o "$work/synthjobs" ./test/bench/cmd/synthjobs

cleanup() {
  "$work/synthjobs" delete || true
  mysql_root -e "DROP DATABASE IF EXISTS $scratch" || true
  rm -rf "$work"
}
trap cleanup EXIT
"$work/synthjobs" delete >/dev/null  # leftovers of an interrupted run

export GPUBRIDGE_DB_DSN="gpubridge:gpubridge@tcp(127.0.0.1:3306)/$scratch?parseTime=true&loc=UTC"
cat >"$work/rates.yaml" <<'YAML'
version: 1
currency: EUR
types:
  - {name: 1g.10gb, parent: h100}
  - {name: 3g.40gb, parent: h100}
rates:
  - {type: h100, tier: reserved, perGPUHour: "2.10", from: 2020-01-01}
  - {type: h100, tier: ondemand, perGPUHour: "3.50", from: 2020-01-01}
YAML

# measure NAME CMD...: runs CMD under /usr/bin/time -v; sets WALL (s) and RSS (MiB).
measure() {
  local name=$1; shift
  /usr/bin/time -v -o "$work/time.$name" "$@" >"$work/out.$name" 2>"$work/err.$name" || {
    echo "bench: $name failed:" >&2; cat "$work/err.$name" >&2; exit 1; }
  WALL=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$work/time.$name")
  RSS=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$work/time.$name")
}

results=()
for rows in "${sizes[@]}"; do
  echo "== $rows job rows in $MONTH"
  mysql_root -e "DROP DATABASE IF EXISTS $scratch; CREATE DATABASE $scratch"
  "$work/gpubridge" -i load ratecard file="$work/rates.yaml" >/dev/null
  "$work/synthjobs" delete >/dev/null
  "$work/synthjobs" insert -month $MONTH -rows "$rows" -accounts 1000
  mysql_root slurm_acct_db -e "ANALYZE TABLE ${GPUBRIDGE_CLUSTER}_job_table" >/dev/null

  # Warm the page cache for both readers alike: one untimed pass of each.
  "$work/gpubridge" ingest from=$FROM to=$TO >/dev/null 2>&1
  mysql_root -e "DROP DATABASE $scratch; CREATE DATABASE $scratch"
  "$work/gpubridge" -i load ratecard file="$work/rates.yaml" >/dev/null
  $IN env TZ=UTC sacct -a -P -D -X --noconvert -S $FROM -E $TO -o JobIDRaw,Account,User,Partition,QOS,State,Start,End,AllocTRES >/dev/null

  measure ingest "$work/gpubridge" ingest from=$FROM to=$TO; iw=$WALL; ir=$RSS
  sed -n 's/^/  /p' "$work/out.ingest"
  measure export "$work/gpubridge" export chargeback period=$MONTH format=focus file="$work/focus.csv"; ew=$WALL; er=$RSS
  measure detail "$work/gpubridge" export chargeback period=$MONTH format=csv detail=jobs file="$work/detail.csv"; dw=$WALL; dr=$RSS
  lines=$(($(wc -l <"$work/detail.csv") - 1)) groups=$(($(wc -l <"$work/focus.csv") - 1))
  measure sacct $IN env TZ=UTC sacct -a -P -D -X --noconvert -S $FROM -E $TO -o JobIDRaw,Account,User,Partition,QOS,State,Start,End,AllocTRES
  cw=$WALL; cr=$RSS; crows=$(wc -l <"$work/out.sacct")
  ours=$(awk -v a="$iw" -v b="$ew" 'BEGIN{printf "%.2f", a+b}')
  ratio=$(awk -v s="$cw" -v o="$ours" 'BEGIN{printf "%.1f", s/o}')
  ratio2=$(awk -v s="$cw" -v o="$ours" -v d="$dw" 'BEGIN{printf "%.1f", s/(o+d)}')
  peak=$(printf '%s\n' "$ir" "$er" "$dr" | sort -n | tail -1)
  printf '  %-50s %8s s  %6s MiB\n' "gpubridge ingest" "$iw" "$ir"
  printf '  %-50s %8s s  %6s MiB\n' "gpubridge export chargeback format=focus ($groups rows)" "$ew" "$er"
  printf '  %-50s %8s s  %6s MiB\n' "ours: ingest + price + export" "$ours" "$peak"
  printf '  %-50s %8s s  %6s MiB\n' "(also: export detail=jobs, $lines job lines)" "$dw" "$dr"
  printf '  %-50s %8s s  %6s MiB  (%s rows out)\n' "sacct -a -P -D -X (same month)" "$cw" "$cr" "$crows"
  printf '  ratio sacct / ours: %sx (%sx with the job line items)   peak RSS ours: %s MiB\n' "$ratio" "$ratio2" "$peak"
  results+=("$(printf '%8d rows  ours %6s s (ingest %s + export %s; line items %s)  peak RSS %4s MiB  sacct %7s s %6s MiB  ratio %sx (%sx)' \
    "$rows" "$ours" "$iw" "$ew" "$dw" "$peak" "$cw" "$cr" "$ratio" "$ratio2")")
done
echo
echo "== summary (goal: ratio >= 5x, peak RSS <= 256 MiB and flat); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%s\n' "${results[@]}"
