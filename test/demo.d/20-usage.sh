#!/usr/bin/env bash
# Demo step: usage metering and chargeback. Tenants' users run short jobs
# (full H100s and MIG slices), gpubridge ingests them from slurm_acct_db,
# shows this month's usage per tenant, GPU type and tier, and exports the
# chargeback (CSV summary and the FinOps FOCUS file). Runs after the tenants
# step (10-); uses its tenants, or declares two of its own (u20acme,
# u20globex) when there are none. Idempotent: a rate card is loaded only if
# none exists, re-ingesting adds nothing, and old demo jobs are cancelled.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
# shellcheck disable=SC1091
source .testbed/env
export PATH="$PWD/bin:$PATH"
type step >/dev/null 2>&1 || step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
IN=test/testbed/in-root.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step "usage: the rate card (loaded only if there is none)"
if ! gpubridge show ratecard >/dev/null 2>&1; then
  cat >"$work/rates.yaml" <<'YAML'
version: 1
currency: EUR
types:
  - {name: 1g.10gb, parent: h100}   # a MIG profile of the H100: 1/7 of its rate
  - {name: 3g.40gb, parent: h100}   # 3/7
rates:
  - {type: h100, tier: reserved, perGPUHour: "2.10", from: 2026-01-01}
  - {type: h100, tier: ondemand, perGPUHour: "3.50", from: 2026-01-01}
  - {type: h100, tier: booked, perGPUHour: "4.00", from: 2026-01-01}   # bookings (step 40)
YAML
  gpubridge -i load ratecard file="$work/rates.yaml"
fi
# MIG profiles are priced from their parent GPU: declare the parents the card lacks.
for p in 1g.10gb 3g.40gb; do
  gpubridge show ratecard | grep -q "name: $p" || gpubridge add gputype name=$p parent=h100
done
gpubridge show rates

# Tenants with users: Name|Description|GPUs|Users|...
mapfile -t tenants < <(gpubridge show tenants -P -n 2>/dev/null | awk -F'|' '$4 != "" && $9 != "deleting" {print $1 "|" $3 "|" $4}' | head -3)
if [ ${#tenants[@]} -eq 0 ]; then
  step "usage: no tenants yet; declaring u20acme and u20globex"
  gpubridge -i add tenant u20acme gpus=h100:2,1g.10gb:2 users=alice description="usage demo" 2>/dev/null ||
    gpubridge -i modify tenant u20acme set gpus=h100:2,1g.10gb:2 users=alice
  gpubridge -i add tenant u20globex gpus=h100:1,3g.40gb:1 users=bob description="usage demo" 2>/dev/null ||
    gpubridge -i modify tenant u20globex set gpus=h100:1,3g.40gb:1 users=bob
  gpubridge -i apply
  tenants=("u20acme|h100=2,1g.10gb=2|alice" "u20globex|h100=1,3g.40gb=1|bob")
fi

step "usage: tenants' users run short jobs (full GPUs and MIG slices)"
start=$(date -u +%Y-%m-%dT%H:%M:%S)
ids=()
for t in "${tenants[@]}"; do
  IFS='|' read -r name gpus users <<<"$t"
  user=${users%%,*}
  $IN scancel -A "$name" -n usage-demo 2>/dev/null || true
  for typ in h100 1g.10gb 3g.40gb; do
    case ",$gpus," in *",$typ="*|*",$typ:"*) ;; *) continue ;; esac
    id=$($IN --user "$user" sbatch --parsable -A "$name" --gres=gpu:$typ:1 -t 2 -o /dev/null -J usage-demo --wrap 'sleep 15')
    echo "  $user ($name): job $id on gpu:$typ:1"
    ids+=("$id")
  done
done
for _ in $(seq 90); do
  [ ${#ids[@]} -eq 0 ] && break
  [ -z "$($IN squeue -h -j "$(IFS=,; echo "${ids[*]}")" 2>/dev/null)" ] && break
  sleep 1
done
$IN scancel -n usage-demo 2>/dev/null || true
sleep 2 # slurmdbd writes the job records

step "usage: gpubridge ingest (slurm_acct_db, read-only user)"
gpubridge ingest from="$start"
gpubridge ingest from="$start" | sed 's/^/re-ingest: /'

step "usage: gpubridge show usage (this month to date)"
gpubridge show usage

period=$(date -u +%Y-%m)
step "usage: gpubridge export chargeback period=$period format=csv"
gpubridge export chargeback period="$period" format=csv
step "usage: gpubridge export chargeback period=$period format=focus (first lines)"
gpubridge export chargeback period="$period" format=focus | head -4
