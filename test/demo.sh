#!/usr/bin/env bash
# The main job end to end on the local testbed (`make demo`): the testbed is
# already up (make brings it up), the daemon starts, then each step under
# test/demo.d/ runs in order: tenants, jobs, usage and chargeback, burst.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
[ -f .testbed/env ] || { echo "demo: .testbed/env missing; run 'make testbed-up' first" >&2; exit 1; }
# shellcheck disable=SC1091
source .testbed/env
export PATH="$PWD/bin:$PATH"
export GPUBRIDGE_LISTEN=${GPUBRIDGE_LISTEN:-127.0.0.1:9180}
export GPUBRIDGE_METRICS_LISTEN=${GPUBRIDGE_METRICS_LISTEN:-127.0.0.1:9181}

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
export -f step

step "gpubridge ping"
gpubridge ping
step "gpubridge show nodes"
gpubridge show nodes

step "gpubridge migrate (serve never creates a schema in an empty database by itself)"
gpubridge migrate
step "start the daemon: gpubridge serve (log in .testbed/serve.log)"
gpubridge serve >.testbed/serve.log 2>&1 &
serve_pid=$!
trap 'kill $serve_pid 2>/dev/null; wait $serve_pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  curl -fsS "http://$GPUBRIDGE_LISTEN/healthz" >/dev/null 2>&1 && break
  kill -0 $serve_pid 2>/dev/null || { echo "demo: gpubridge serve exited:" >&2; cat .testbed/serve.log >&2; exit 1; }
  sleep 0.2
done
ready=no
for _ in $(seq 100); do
  curl -fsS "http://$GPUBRIDGE_LISTEN/readyz" >/dev/null 2>&1 && { ready=yes; break; }
  sleep 0.2
done
[ $ready = yes ] || { echo "demo: gpubridge serve is not ready after 20 s:" >&2; tail -20 .testbed/serve.log >&2; exit 1; }
echo "daemon ready on http://$GPUBRIDGE_LISTEN (API, /healthz, /readyz) and http://$GPUBRIDGE_METRICS_LISTEN (/metrics)"

for s in test/demo.d/*.sh; do
  [ -e "$s" ] || continue
  bash "$s"
done
step "demo finished"
