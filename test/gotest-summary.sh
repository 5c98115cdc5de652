#!/usr/bin/env bash
# Reads `go test -v` output on stdin, passes it through, and ends with one
# line "N passed, N failed, N skipped" counting top-level and sub-tests.
# Exits non-zero when any test failed or (with --no-skip) any test skipped:
# an integration run that skips proves nothing.
set -uo pipefail
no_skip=0
[ "${1:-}" = "--no-skip" ] && no_skip=1
pass=0 fail=0 skip=0 pkgfail=0
skipped=()
broken=()
while IFS= read -r line; do
  printf '%s\n' "$line"
  case "$line" in
    *"--- PASS: "*) pass=$((pass+1)) ;;
    *"--- FAIL: "*) fail=$((fail+1)) ;;
    *"--- SKIP: "*) skip=$((skip+1)); skipped+=("${line#*--- SKIP: }") ;;
    *"[build failed]"*|*"[setup failed]"*) pkgfail=1; broken+=("${line#FAIL	}") ;;
    FAIL*|"panic: "*) pkgfail=1 ;;
  esac
done
echo
echo "$pass passed, $fail failed, $skip skipped"
if [ ${#broken[@]} -gt 0 ]; then
  echo "${#broken[@]} package(s) did not build or set up, so their tests did not run: ${broken[*]}" >&2
fi
if [ $no_skip = 1 ] && [ $skip -gt 0 ]; then
  echo "integration tests must not skip; skipped: ${skipped[*]}" >&2
  exit 1
fi
[ $fail -eq 0 ] && [ $pkgfail -eq 0 ]
