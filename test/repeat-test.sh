#!/usr/bin/env bash
# repeat-test.sh [N]: run `make test` N times (default 3) in a row on the same testbed, as CI
# would on a machine whose testbed has run it before, and check that every run is green with
# the same test count and no skips. Prints one line per run and exits non-zero on the first
# difference. Logs: .testbed/repeat-<i>.log.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
n=${1:-3}
mkdir -p .testbed
first=
for ((i = 1; i <= n; i++)); do
  log=.testbed/repeat-$i.log
  t0=$SECONDS
  if ! make --no-print-directory test >"$log" 2>&1; then
    echo "run $i/$n: FAILED after $((SECONDS - t0)) s (log $log):" >&2
    grep -E -- '--- FAIL|^FAIL|panic:' "$log" | head -20 >&2
    exit 1
  fi
  summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1)
  echo "run $i/$n: $summary in $((SECONDS - t0)) s"
  [[ $summary == *", 0 failed, 0 skipped" ]] || { echo "run $i: not clean: $summary" >&2; exit 1; }
  if [[ -z $first ]]; then
    first=$summary
  elif [[ $summary != "$first" ]]; then
    echo "run $i: '$summary' differs from run 1: '$first'" >&2
    exit 1
  fi
done
echo "repeat-test: $n green runs, each '$first'"
