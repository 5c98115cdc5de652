#!/usr/bin/env bash
# Demo step: tenant bookings. acme (quota h100=2, from the tenants step)
# books 2 h100 for the next 10 minutes; show availability shows it; a
# globex booking that would overlap is refused with the next available
# window; the booking becomes a Slurm reservation (gpubridge project, which
# the daemon also runs every minute); with acme's quota full, an acme job
# naming the booking runs inside it (the job_submit guard switches it to
# acme's reservation QOS); a globex job naming it is refused, and a globex
# job outside it cannot use its idle GPU. Runs after the tenants step (10-);
# idempotent: re-running cancels the bookings and jobs it made before.
# Then the booking's bill: the booked rate, the charge (GPUs x window),
# the usage inside it at rate 0, its utilization, and the chargeback line.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
# shellcheck disable=SC1091
source .testbed/env
export PATH="$PWD/bin:$PATH"
export GPUBRIDGE_GUARD_FILE=${GPUBRIDGE_GUARD_FILE:-$GPUBRIDGE_TESTBED_ROOT/var/lib/gpubridge/guard/tenants.table}
type step >/dev/null 2>&1 || step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
IN=test/testbed/in-root.sh
PURPOSE="bookings demo"
# The tenants of the tenants step; a test run of this step alone names its own.
A=${DEMO_BOOKING_TENANT:-acme} AU=${DEMO_BOOKING_USER:-alice}
G=${DEMO_OTHER_TENANT:-globex} GU=${DEMO_OTHER_USER:-carol}

# An earlier run's bookings and jobs.
for id in $(gpubridge show bookings -P -n format=id,purpose,state | awk -F'|' -v p="$PURPOSE" '$2 == p && $3 != "cancelled" && $3 != "ended" {print $1}'); do
  gpubridge -i delete booking "$id"
done
$IN scancel -A "$A" 2>/dev/null || true
$IN scancel -A "$G" -n bookings-demo 2>/dev/null || true
for _ in $(seq 30); do
  [ -z "$($IN squeue -h -A "$A")" ] && break
  sleep 1
done
gpubridge project >/dev/null

step "bookings: $A books 2 h100 for the next 10 minutes"
gpubridge -i apply >/dev/null # the tenants' reservation QOS, if the tenants step ran on an older gpubridge
gpubridge -i add booking tenant="$A" gpus=h100:2 start=now duration=10m purpose="$PURPOSE"
gpubridge show bookings tenant="$A" state=requested,scheduled,active

step "bookings: show availability (the next hour, 10 minute steps)"
gpubridge show availability type=h100 from=now to=now+1h step=10m

step "bookings: $G asks for 3 h100 over the same window: refused, with the next window that fits"
gpubridge -i add booking tenant="$G" gpus=h100:3 start=now+5m duration=10m || echo "(exit $?)"
gpubridge find slot type=h100 count=3 duration=10m limit=1

step "bookings: gpubridge project makes the Slurm reservation (the daemon does so every minute)"
gpubridge project
name=$(gpubridge show bookings -P -n tenant="$A" format=reservation,purpose,state | awk -F'|' -v p="$PURPOSE" '$2 == p && $3 == "active" {print $1; exit}')
$IN scontrol show reservation "$name"
$IN sacctmgr -P show qos "$A,$A-resv" format=name,grptres,flags

step "bookings: $A's quota (h100=2) is full: two jobs outside the booking run, a third waits"
for _ in 1 2; do
  $IN --user "$AU" sbatch -A "$A" --gres=gpu:h100:1 -t 3 -o /dev/null -J bookings-demo --wrap 'sleep 120'
done
$IN --user "$AU" sbatch -A "$A" --gres=gpu:h100:1 -t 3 -o /dev/null -J bookings-demo --wrap 'sleep 120'
sleep 6
$IN squeue -A "$A" -o '%.6i %.12q %.16v %.8T %r'

step "bookings: a $A job naming the booking runs inside it, in $A's reservation QOS"
$IN --user "$AU" sbatch -A "$A" --reservation="$name" --gres=gpu:h100:1 -t 3 -o /dev/null -J bookings-demo --wrap 'sleep 120'
for _ in $(seq 20); do
  [ "$($IN squeue -h -A "$A" -t RUNNING -o %v | grep -c "$name")" -ge 1 ] && break
  sleep 1
done
$IN squeue -A "$A" -o '%.6i %.12q %.16v %.8T %r'

step "bookings: $G cannot use it: a job naming it is refused; a job outside it waits, though the booking has an idle GPU"
$IN --user "$GU" sbatch -A "$G" --reservation="$name" --gres=gpu:h100:1 -t 3 -o /dev/null -J bookings-demo --wrap 'sleep 60' || echo "(refused, exit $?)"
$IN --user "$GU" sbatch -A "$G" --gres=gpu:h100:1 -t 3 -o /dev/null -J bookings-demo --wrap 'sleep 60'
sleep 11
$IN squeue -A "$G" -n bookings-demo -o '%.6i %.12q %.8T %r'
$IN scancel -A "$G" -n bookings-demo

step "bookings: the daemon's metrics per GPU type"
curl -fsS "http://${GPUBRIDGE_METRICS_LISTEN:-127.0.0.1:9181}/metrics" 2>/dev/null | grep -E '^gpubridge_bookings_(capacity|booked|free|at_risk)\{resource="gpu:h100"' ||
  echo "(the daemon is not running: make demo starts it; the metrics appear after its first bookings run)"

step "bookings: the bill: the booked rate (added if missing), the charge, the use inside at 0"
cur=$( (gpubridge show ratecard 2>/dev/null || true) | awk '$1 == "currency:" {print $2}')
gpubridge show rates -P -n 2>/dev/null | grep -q '^h100|booked|' ||
  gpubridge add rate type=h100 tier=booked price=4.00 from=2026-01-01 currency="${cur:-EUR}"
gpubridge show rates where tier=booked
gpubridge ingest >/dev/null
gpubridge charge bookings || echo "(exit $?: the bookings named above are not charged)"
gpubridge show usage tenant="$A"

step "bookings: the chargeback shows the booking as its own line (CSV; FOCUS: a Purchase of the commitment)"
gpubridge export chargeback period="$(date -u +%Y-%m)" format=csv tenant="$A" | python3 -c '
import csv, sys
for r in csv.DictReader(sys.stdin):  # the booked tier, the tenant subtotal and the total
    if r["tier"] == "booked" or r["row_type"] != "line":
        print(r["row_type"], r["kind"] or "-", r["tier"] or "-", "used", r["gpu_seconds"], "booked", r["booked_gpu_seconds"], r["amount"], r["booking"] or "-")
'
gpubridge export chargeback period="$(date -u +%Y-%m)" format=focus tenant="$A" | python3 -c '
import csv, sys
for r in csv.DictReader(sys.stdin):
    if r["x_Tier"] == "booked":
        print(r["ChargeCategory"], r["PricingCategory"], r["CommitmentDiscountId"], r["CommitmentDiscountStatus"] or "-", r["x_GpuSeconds"], r["x_BookedGpuSeconds"], r["BilledCost"])
'
