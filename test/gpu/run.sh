#!/usr/bin/env bash
# test/gpu/run.sh [--fixtures] [--model NAME] [--dcgm] [--out DIR] [--gpubridge PATH]
#
# Runs gpubridge's real check parsers (`gpubridge health judge`) on the output of the real tools on
# this machine: the nvidia-smi queries of the built-in checks nvidia-smi-ecc and nvidia-smi-pages,
# the kernel log's Xid lines (xid) and, with --dcgm, `dcgmi diag -r 1 -j` (dcgm-r1, about a minute).
# Everything it runs only reads: no MIG, clock, power, persistence or application setting is changed,
# no GPU is reset, nothing is installed. The outputs are kept under --out (default a new directory
# in /tmp) with a summary, to be added to bridge/health/check/testdata as recorded fixtures.
#
# --fixtures judges the recorded fixtures in bridge/health/check/testdata instead (no GPU needed):
# every *-pass* file must pass and every *-fail* file must fail.
#
# Exit: 0 when every output was judged (and, with --fixtures, as its name says), 1 otherwise,
# 2 for bad arguments.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
fixtures=0 dcgm=0 model="" out="" gpb=""
while (($#)); do
  case $1 in
    --fixtures) fixtures=1 ;;
    --dcgm) dcgm=1 ;;
    --model) model=${2:?--model NAME}; shift ;;
    --out) out=${2:?--out DIR}; shift ;;
    --gpubridge) gpb=${2:?--gpubridge PATH}; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [[ -z $gpb ]]; then
  gpb=$(command -v gpubridge || true)
  if [[ -z $gpb ]]; then
    gpb=$(mktemp -d)/gpubridge
    (cd "$repo" && go build -o "$gpb" ./cmd/gpubridge) || { echo "run.sh: cannot build gpubridge" >&2; exit 1; }
  fi
fi
cfg=$(mktemp)
echo "version: 1" >"$cfg"
judge() { "$gpb" --config "$cfg" -P -n health judge "$@"; }
rc=0

if ((fixtures)); then
  dir=$repo/bridge/health/check/testdata
  for f in "$dir"/*; do
    name=$(basename "$f")
    case $name in
      dcgm-r1-*) c=dcgm-r1 ;; dcgm-r2-*) c=dcgm-r2 ;; dcgm-r3-*) c=dcgm-r3 ;; dcgm-*) c=dcgm-r1 ;;
      smi-ecc-*|smi-driver-*) c=nvidia-smi-ecc ;; smi-pages-*) c=nvidia-smi-pages ;;
      xid-*) c=xid ;; nvbandwidth-*) c=nvbandwidth ;; nccl-2node-*) c=nccl-2node ;; nccl-*) c=nccl-1node ;;
      *) continue ;;
    esac
    m=h100; [[ $name == *v100* ]] && m=v100
    line=$(judge "$c" "$f" model=$m gpus=4) || { rc=1; echo "$name: not judged" >&2; continue; }
    verdict=$(cut -d'|' -f3 <<<"$line")
    printf '%-32s %-16s %s\n' "$name" "$c" "$(cut -d'|' -f3,4 <<<"$line" | tr '|' ' ')"
    case $name in
      *-pass*) [[ $verdict == pass ]] || { echo "  ^ $name should pass" >&2; rc=1; } ;;
      *-fail*) [[ $verdict == fail ]] || { echo "  ^ $name should fail" >&2; rc=1; } ;;
    esac
  done
  exit $rc
fi

command -v nvidia-smi >/dev/null || { echo "run.sh: no nvidia-smi on this machine (use --fixtures)" >&2; exit 1; }
out=${out:-$(mktemp -d /tmp/gpubridge-gpu.XXXXXX)}
mkdir -p "$out"
# The built-in checks' commands (bridge/health/check/catalog.go; TestGPUScriptRunsTheBuiltinCommands
# keeps them equal).
ecc_query='nvidia-smi --query-gpu=index,pci.bus_id,ecc.mode.current,ecc.errors.uncorrected.volatile.total,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.aggregate.total --format=csv'
pages_query='nvidia-smi --query-gpu=index,pci.bus_id,retired_pages.single_bit_ecc.count,retired_pages.double_bit.count,retired_pages.pending,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure --format=csv'
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
if [[ -z $model ]]; then
  # "NVIDIA H100 80GB HBM3" -> h100; pass --model as the GRES type of gres.conf when it differs.
  model=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')
fi
nvidia-smi -L >"$out/nvidia-smi-L.txt" 2>&1
run() { # name check command...
  local name=$1 check=$2; shift 2
  "$@" >"$out/$name" 2>&1
  local code=$?
  local line
  if line=$(judge "$check" "$out/$name" model="$model" gpus="$gpus" exit=$code); then
    printf '%-24s %-16s exit %-3d %s\n' "$name" "$check" "$code" "$(cut -d'|' -f3- <<<"$line" | tr '|' ' ')" | tee -a "$out/summary.txt"
  else
    rc=1
  fi
}
run smi-ecc.csv nvidia-smi-ecc bash -c "$ecc_query"
run smi-pages.csv nvidia-smi-pages bash -c "$pages_query"
run xid.txt xid bash -c 'set -o pipefail
if log=$(dmesg --time-format iso 2>/dev/null || journalctl -k -b --no-pager -o short-iso 2>/dev/null); then
  printf "%s\n" "$log" | grep -F "NVRM: Xid" || true
  echo "xid-scan=ok lines=$(printf "%s\n" "$log" | wc -l)"
else
  echo "cannot read the kernel log (dmesg and journalctl -k failed)"
  exit 1
fi'
if ((dcgm)); then
  if command -v dcgmi >/dev/null; then
    run dcgm-r1.json dcgm-r1 timeout 600 dcgmi diag -r 1 -j
  else
    echo "dcgmi: not installed, dcgm-r1 skipped" | tee -a "$out/summary.txt"
  fi
fi
echo "model=$model gpus=$gpus; outputs in $out"
exit $rc
