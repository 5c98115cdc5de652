#!/usr/bin/env bash
# Demo step: tenants onto Slurm. Declares three sample tenants from a YAML
# file (acme, globex, initech), shows the plan, applies it, shows the
# tenants and the Slurm objects they became, then acme's user submits three
# 1-GPU jobs against acme's h100=2 quota: two run, one pends with QOSGrpGRES;
# an untyped --gres=gpu:1 request is refused by the job_submit guard. A
# second apply makes no writes. Idempotent: re-running re-declares the same
# tenants (apply finds nothing to do) and cancels the previous demo jobs.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
# shellcheck disable=SC1091
source .testbed/env
export PATH="$PWD/bin:$PATH"
export GPUBRIDGE_GUARD_FILE=${GPUBRIDGE_GUARD_FILE:-$GPUBRIDGE_TESTBED_ROOT/var/lib/gpubridge/guard/tenants.table}
type step >/dev/null 2>&1 || step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
IN=test/testbed/in-root.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for t in acme globex initech; do $IN scancel -A $t -n tenants-demo 2>/dev/null || true; done

step "tenants: three sample tenants in a YAML file"
cat >"$work/tenants.yaml" <<'YAML'
version: 1
tenants:
  - name: acme
    description: Acme ML research
    organization: acme-corp
    users: [alice, bob]
    admins: [alice]
    gpus: {h100: 2, 1g.10gb: 2}
  - name: globex
    description: Globex vision team
    users: [carol, dave]
    admins: [carol]
    gpus: {h100: 1, 3g.40gb: 1}
  - name: initech
    description: Initech inference
    users: [erin]
    gpus: {1g.10gb: 3}
    burst: {enabled: true, maxOnDemandGPUs: 2, monthlyBudget: "500.00"}
YAML
cat "$work/tenants.yaml"

step "tenants: gpubridge plan (what apply will do in Slurm)"
gpubridge apply -f "$work/tenants.yaml" </dev/null || true   # shows the plan; answering no (end of input) changes nothing

step "tenants: gpubridge -i apply -f tenants.yaml"
gpubridge -i apply -f "$work/tenants.yaml"

step "tenants: gpubridge show tenants"
gpubridge show tenants
gpubridge show tenants format=name,gpus,users,admins,burst,burstmaxgpus,burstbudget

step "tenants: what Slurm holds now (sacctmgr)"
$IN sacctmgr -P show qos acme,globex,initech format=name,grptres,description
$IN sacctmgr -P show assoc account=acme,globex,initech format=account,user,qos,defaultqos
$IN sacctmgr -P show account acme,globex,initech withcoord format=account,descr,org,coord

step "tenants: a second apply finds nothing to do (1 read, 0 writes)"
gpubridge -i apply

step "tenants: alice submits three 1-GPU jobs against acme's h100=2 quota"
ids=()
for _ in 1 2 3; do
  ids+=("$($IN --user alice sbatch --parsable -A acme --gres=gpu:h100:1 -t 2 -o /dev/null -J tenants-demo --wrap 'sleep 60')")
done
echo "submitted jobs ${ids[*]}"
for _ in $(seq 30); do
  n=$($IN squeue -h -j "$(IFS=,; echo "${ids[*]}")" -o '%T %r' | grep -c 'PENDING QOSGrpGRES' || true)
  [ "$n" -ge 1 ] && break
  sleep 1
done
$IN squeue -j "$(IFS=,; echo "${ids[*]}")" -o '%.8i %.8u %.8a %.10T %.12r %b'

step "tenants: an untyped GPU request from acme is refused by the job_submit guard"
$IN --user alice sbatch -A acme --gres=gpu:1 -o /dev/null --wrap 'sleep 5' || echo "(refused, as it should be)"

step "tenants: the audit log"
gpubridge show audit kind=tenant limit=5

$IN scancel -n tenants-demo -A acme 2>/dev/null || true
