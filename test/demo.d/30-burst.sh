#!/usr/bin/env bash
# Demo step: a tenant bursts past its GPU quota. Tenant b5demo (quota h100=1,
# burst on, cap 2) submits two 1-GPU jobs: one runs in the pool, the daemon's
# burst controller (gpubridge serve, schedules.burst) moves the other to the
# on-demand tier, and after ingest the usage shows the tenant's ondemand line
# beside its reserved one. Runs after the tenants (10-) and usage (20-) steps;
# idempotent (re-running re-declares the tenant and cancels its old jobs).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
# shellcheck disable=SC1091
source .testbed/env
export PATH="$PWD/bin:$PATH"
type step >/dev/null 2>&1 || step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
IN=test/testbed/in-root.sh
TENANT=b5demo
USER_=heidi

step "burst: tenant $TENANT with quota h100=1 and burst on (cap 2 on-demand GPUs)"
if gpubridge show tenants -P -n 2>/dev/null | cut -d'|' -f1 | grep -qx "$TENANT"; then
  gpubridge -i modify tenant "$TENANT" set gpus=h100:1 users=$USER_ burst=yes burstmaxgpus=2
else
  gpubridge -i add tenant "$TENANT" gpus=h100:1 users=$USER_ burst=yes burstmaxgpus=2 description="burst demo"
fi
gpubridge -i apply
$IN scancel -A "$TENANT" 2>/dev/null || true

step "burst: $USER_ submits two 1-GPU jobs with plain sbatch (quota allows one)"
start=$(date -u +%Y-%m-%dT%H:%M:%S)
for _ in 1 2; do
  $IN --user $USER_ sbatch -A "$TENANT" --gres=gpu:h100:1 -t 2 -o /dev/null -J burst-demo --wrap 'sleep 40'
done
sleep 2
$IN squeue -A "$TENANT" -o '%.8i %.9P %.9q %.8T %r'

step "burst: the daemon moves the quota-held job to the on-demand tier (within two poll intervals)"
for _ in $(seq 60); do
  gpubridge show burst tenant="$TENANT" -P -n 2>/dev/null | grep -q '|bursting|' && break
  sleep 1
done
$IN squeue -A "$TENANT" -o '%.8i %.9P %.9q %.8T %r'
gpubridge show burst tenant="$TENANT"

step "burst: jobs finish; ingest; the usage shows the reserved and the ondemand line"
for _ in $(seq 120); do
  [ -z "$($IN squeue -h -A "$TENANT")" ] && break
  sleep 1
done
# slurmdbd commits job ends to its database a few seconds after the jobs end.
for _ in $(seq 10); do
  sleep 3
  gpubridge ingest from="$start" >/dev/null 2>&1 || true
  gpubridge show usage tenant="$TENANT" -P -n | grep -q '|ondemand|' && break
done
gpubridge ingest from="$start"
gpubridge show usage tenant="$TENANT"
