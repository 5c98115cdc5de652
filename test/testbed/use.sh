#!/usr/bin/env bash
# use.sh [--fresh] CMD ARGS...
# Run CMD with the testbed to itself: take the testbed's use lock (one test run, bench or demo
# at a time on this machine; others wait, saying who holds it), bring the testbed up if it is
# not (up.sh; with --fresh, restart it from the cached root so that nothing an earlier run left
# is seen), copy this tree's contrib/job_submit*.lua into the root, load .testbed/env, run CMD.
# Nested calls (CMD calling use.sh again) see GPUBRIDGE_TESTBED_IN_USE and do not lock twice.
# Examples:
#   test/testbed/use.sh go test -tags integration -count=1 ./bridge/tenantstore/
#   test/testbed/use.sh --fresh make --no-print-directory test-integration
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tb_require_root
fresh=()
[[ ${1:-} == --fresh ]] && { fresh=(--fresh); shift; }
(($#)) || { echo "usage: $0 [--fresh] CMD [ARGS...]" >&2; exit 2; }
TB_USE_WHAT="use.sh $* (in $TB_REPO)" tb_use_lock
if ((${#fresh[@]})); then
  t0=$(tb_now_us)
  "$TB_DIR/up.sh" --fresh
  tb_log "fresh testbed for this run in $(tb_fmt_s $(($(tb_now_us) - t0))) s"
else
  "$TB_DIR/up.sh"
fi
# shellcheck disable=SC1091
source "$TB_REPO/.testbed/env"
# This shell keeps the lock (fd 8) until CMD ends; CMD runs without the descriptor, so that a
# daemon it leaves behind cannot hold the testbed forever.
rc=0
"$@" 8>&- || rc=$?
exit "$rc"
