#!/usr/bin/env bash
# Benchmark: ingest + price + export of a month of synthetic jobs, against
# sacct reading the same month and against the hardware floor, measured in
# the same run; then the re-read of the month, its close and a changes pass.
#
# For each size (default 100000 and 1000000 rows; 40% with GPUs, 5% with MIG
# slices, 1,000 accounts) it writes the rows into the testbed's job table
# (month 2026-06, ids 900000000+, accounts m4syn*), then measures with
# /usr/bin/time -v:
#   floor: the month's job rows streamed with `mariadb --quick` (no sorting,
#          no filter), plus LOAD DATA LOCAL INFILE of as many ledger lines as
#          ours wrote into an empty copy of usage_ledger (CREATE TABLE LIKE)
#   ours:  gpubridge ingest (slurm_acct_db -> ledger, on a scratch database)
#          gpubridge export chargeback format=focus (price every line + the FOCUS chargeback)
#          and, shown separately, format=csv detail=jobs (every job line item)
#   sacct: TZ=UTC sacct -a -P -D -X --noconvert -S .. -E .. -o <our fields>
#   re-read: gpubridge ingest of the same month again (a bulk comparison, nothing written)
#   close:   gpubridge -i close period=2026-06 (re-reads the month and since, prices, closes)
#   changes: gpubridge ingest pass=changes (one full scan of the job table by mod_time)
# and prints wall time, peak RSS and the ratios. The synthetic rows and the
# scratch database are removed at the end, also on failure.
#
# BENCH_SCAN_ONLY=1 measures, for each size, only the floor's streamed read
# and the changes pass (for the 10M-row table: sacct and the export are
# skipped): BENCH_SCAN_ONLY=1 test/bench/ingest.sh 10000000
#
# Where one ingest's time goes (reader, writer, their overlap; CPU and
# allocation profiles, trace): go build ./test/bench/cmd/ingestprof and run
# it with the same environment instead of `gpubridge ingest` (its -h).
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
scan_only=${BENCH_SCAN_ONLY:-}
MONTH=2026-06 FROM=2026-06-01T00:00:00 TO=2026-07-01T00:00:00
S=$(date -u -d "$FROM" +%s) E=$(date -u -d "$TO" +%s)
IN=test/testbed/in-root.sh
work=$(mktemp -d "$TMPDIR/bench-ingest.XXXXXX")
scratch=gpubridge_m4_bench
ROOT=$GPUBRIDGE_TESTBED_ROOT
lines_file=/tmp/gpubridge-bench-lines.tsv # inside the root
mysql_root() { $IN mariadb -u root -N -B "$@"; }
jt="${GPUBRIDGE_CLUSTER}_job_table"

go build -o "$work/gpubridge" ./cmd/gpubridge
go build -o "$work/synthjobs" ./test/bench/cmd/synthjobs

cleanup() {
  "$work/synthjobs" delete || true
  mysql_root -e "DROP DATABASE IF EXISTS $scratch; DROP DATABASE IF EXISTS ${scratch}_floor" || true
  rm -f "$ROOT$lines_file"
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
  - {type: gpu, perGPUHour: "1.00", from: 2020-01-01}
YAML

# measure NAME CMD...: runs CMD under /usr/bin/time -v; sets WALL (s) and RSS (MiB).
measure() {
  local name=$1; shift
  /usr/bin/time -v -o "$work/time.$name" "$@" >"$work/out.$name" 2>"$work/err.$name" || {
    echo "bench: $name failed:" >&2; cat "$work/err.$name" >&2; exit 1; }
  WALL=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$work/time.$name")
  RSS=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$work/time.$name")
  CPU=$(awk -F': ' '/User time|System time/ {s+=$2} END {printf "%.2f", s}' "$work/time.$name")
}
# quiesce: wait (up to 60 s) until InnoDB has flushed what the previous
# step wrote, so that no measured step pays for another's writes.
quiesce() {
  local i dirty
  for ((i = 0; i < 120; i++)); do
    dirty=$(mysql_root -e "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'INNODB_BUFFER_POOL_PAGES_DIRTY'")
    ((dirty < 200)) && return 0
    sleep 0.5
  done
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'; }
sum() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a+b}'; }
fresh_ledger() {
  mysql_root -e "DROP DATABASE IF EXISTS $scratch; CREATE DATABASE $scratch"
  "$work/gpubridge" -i load ratecard file="$work/rates.yaml" >/dev/null
}
# The floor's read: the month's rows, the columns an ingest needs, streamed
# (a script of its own, so that /usr/bin/time measures it).
printf '%s\n' "exec $IN mariadb -u root --quick -B -N slurm_acct_db -e 'SELECT t.job_db_inx, t.id_job, t.time_submit, t.time_start, t.time_end, t.id_assoc, t.id_qos, t.\`partition\`, t.account, t.tres_alloc FROM \`$jt\` t WHERE t.time_end >= $S AND t.time_end < $E' >/dev/null" >"$work/floor_read.sh"
floor_read() { bash "$work/floor_read.sh"; }

echo "== load before: $(cut -d' ' -f1-3 /proc/loadavg)"
results=()
for rows in "${sizes[@]}"; do
  echo "== $rows job rows in $MONTH"
  fresh_ledger
  "$work/synthjobs" delete >/dev/null
  measure synth "$work/synthjobs" insert -month $MONTH -rows "$rows" -accounts 1000
  sed -n 's/^/  /p' "$work/out.synth"
  mysql_root slurm_acct_db -e "ANALYZE TABLE $jt" >/dev/null
  size=$(mysql_root -e "SELECT CONCAT(ROUND(data_length/1048576), ' MiB data + ', ROUND(index_length/1048576), ' MiB indexes') FROM information_schema.tables WHERE table_schema='slurm_acct_db' AND table_name='$jt'")
  echo "  job table: $size"

  if [ -n "$scan_only" ]; then
    floor_read # warm
    measure floorread bash "$work/floor_read.sh"; frw=$WALL
    # A changes pass needs a watermark: ingest the last day of real jobs first.
    "$work/gpubridge" ingest from="$(date -u -d '-1 day' +%Y-%m-%dT%H:%M:%S)" >/dev/null
    measure changes "$work/gpubridge" ingest pass=changes; chw=$WALL; chr=$RSS
    sed -n 's/^/  /p' "$work/out.changes"
    printf '  %-58s %8s s\n' "floor read (mariadb --quick, the month's rows)" "$frw"
    printf '  %-58s %8s s  %6s MiB\n' "changes pass (gpubridge ingest pass=changes)" "$chw" "$chr"
    results+=("$(printf '%8d rows  job table %s  streamed read %6s s  changes pass %6s s (%s MiB)' "$rows" "$size" "$frw" "$chw" "$chr")")
    continue
  fi

  # Warm up every reader alike (one untimed pass of each); the warm-up
  # ingest also gives the ledger lines the floor loads.
  "$work/gpubridge" ingest from=$FROM to=$TO >/dev/null 2>&1
  mysql_root $scratch -e "SELECT cluster, job_id, submit_time, usage_period, tier, gpu_type, revision, booked_period, account, user_name, gpu_count, usage_start, usage_end, gpu_seconds, written_at FROM usage_ledger" >"$ROOT$lines_file"
  nlines=$(wc -l <"$ROOT$lines_file")
  mysql_root -e "DROP DATABASE IF EXISTS ${scratch}_floor; CREATE DATABASE ${scratch}_floor; CREATE TABLE ${scratch}_floor.usage_ledger LIKE $scratch.usage_ledger"
  fresh_ledger
  $IN env TZ=UTC sacct -a -P -D -X --noconvert -S $FROM -E $TO -o JobIDRaw,Account,User,Partition,QOS,State,Start,End,AllocTRES >/dev/null
  floor_read

  # The floor, then ours, back to back: the same rows streamed, and LOAD
  # DATA of as many ledger lines into an empty copy of the ledger table.
  quiesce
  measure floorread bash "$work/floor_read.sh"; frw=$WALL
  quiesce
  measure floorload $IN mariadb -u root -N -B ${scratch}_floor --local-infile=1 -e "LOAD DATA LOCAL INFILE '$lines_file' INTO TABLE usage_ledger"; flw=$WALL
  mysql_root -e "DROP DATABASE ${scratch}_floor"
  floor=$(sum "$frw" "$flw")
  quiesce
  measure ingest "$work/gpubridge" ingest from=$FROM to=$TO; iw=$WALL; ir=$RSS; icpu=$CPU
  sed -n 's/^/  /p' "$work/out.ingest"
  measure export "$work/gpubridge" export chargeback period=$MONTH format=focus file="$work/focus.csv"; ew=$WALL; er=$RSS
  measure detail "$work/gpubridge" export chargeback period=$MONTH format=csv detail=jobs file="$work/detail.csv"; dw=$WALL; dr=$RSS
  lines=$(grep -c "^line," "$work/detail.csv") groups=$(($(wc -l <"$work/focus.csv") - 1))

  measure sacct $IN env TZ=UTC sacct -a -P -D -X --noconvert -S $FROM -E $TO -o JobIDRaw,Account,User,Partition,QOS,State,Start,End,AllocTRES
  cw=$WALL; cr=$RSS; crows=$(wc -l <"$work/out.sacct")

  quiesce
  measure reread "$work/gpubridge" ingest from=$FROM to=$TO; rw=$WALL; rr=$RSS
  sed -n 's/^/  /p' "$work/out.reread"
  quiesce
  measure close "$work/gpubridge" -i close period=$MONTH; clw=$WALL; clr=$RSS
  sed -n 's/^/  /p' "$work/out.close"
  measure changes "$work/gpubridge" ingest pass=changes; chw=$WALL; chr=$RSS

  ours=$(sum "$iw" "$ew")
  peak=$(printf '%s\n' "$ir" "$er" "$dr" "$rr" "$clr" "$chr" | sort -n | tail -1)
  printf '  %-62s %8s s  %6s MiB\n' "floor: streamed read of the month's rows (mariadb --quick)" "$frw" "-"
  printf '  %-62s %8s s  %6s MiB\n' "floor: LOAD DATA of $nlines ledger lines into a copy" "$flw" "-"
  printf '  %-62s %8s s\n' "floor: read + write" "$floor"
  printf '  %-62s %8s s  %6s MiB  (%s s CPU)\n' "gpubridge ingest" "$iw" "$ir" "$icpu"
  printf '  %-62s %8s s  %6s MiB\n' "gpubridge export chargeback format=focus ($groups rows)" "$ew" "$er"
  printf '  %-62s %8s s  %6s MiB\n' "ours: ingest + price + export" "$ours" "$peak"
  printf '  %-62s %8s s  %6s MiB\n' "(also: export detail=jobs, $lines job lines)" "$dw" "$dr"
  printf '  %-62s %8s s  %6s MiB  (%s rows out)\n' "sacct -a -P -D -X (same month)" "$cw" "$cr" "$crows"
  printf '  %-62s %8s s  %6s MiB\n' "re-read of the month (gpubridge ingest, same window)" "$rw" "$rr"
  printf '  %-62s %8s s  %6s MiB\n' "close of the month (re-read since its start, price, close)" "$clw" "$clr"
  printf '  %-62s %8s s  %6s MiB\n' "changes pass (full scan of the job table by mod_time)" "$chw" "$chr"
  printf '  ours / floor %sx (goal <= 1.5)  sacct / ours %sx (goal >= 8)  re-read / ingest %sx (<= 1.5)  close / ingest %sx (<= 2)  peak RSS %s MiB (<= 128)\n' \
    "$(ratio "$ours" "$floor")" "$(ratio "$cw" "$ours")" "$(ratio "$rw" "$iw")" "$(ratio "$clw" "$iw")" "$peak"
  results+=("$(printf '%8d rows  ours %6s s (ingest %s + export %s)  floor %s s (read %s + load %s)  sacct %6s s  re-read %s s  close %s s  changes %s s  peak RSS %s MiB | ours/floor %sx sacct/ours %sx re-read/ingest %sx close/ingest %sx' \
    "$rows" "$ours" "$iw" "$ew" "$floor" "$frw" "$flw" "$cw" "$rw" "$clw" "$chw" "$peak" \
    "$(ratio "$ours" "$floor")" "$(ratio "$cw" "$ours")" "$(ratio "$rw" "$iw")" "$(ratio "$clw" "$iw")")")
done
echo
echo "== summary (goals: ours <= 1.5x the floor, sacct >= 8x ours, re-read <= 1.5x and close <= 2x the ingest, peak RSS <= 128 MiB); load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%s\n' "${results[@]}"
