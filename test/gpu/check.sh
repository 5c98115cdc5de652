#!/usr/bin/env bash
# test/gpu/check.sh: compare gpubridge's NVML inventory and rendering with nvidia-smi on a
# machine with NVIDIA GPUs. READ-ONLY: it runs only `gpubridge gres inventory`,
# `gpubridge gres generate` (to stdout / a temporary directory), `nvidia-smi -L` and
# `nvidia-smi mig -lgi`. It never changes MIG mode, clocks or any other device setting.
#
# Usage: test/gpu/check.sh [GPUBRIDGE_BINARY]    (default: $GPUBRIDGE, else bin/gpubridge)
# Needs: nvidia-smi, python3. Exit 0 when every check passes, 1 otherwise, 2 when it cannot run.
set -euo pipefail

bin=${1:-${GPUBRIDGE:-bin/gpubridge}}
[[ -x $bin ]] || { echo "check.sh: no gpubridge binary at $bin (make build, or pass its path)" >&2; exit 2; }
command -v nvidia-smi >/dev/null || { echo "check.sh: nvidia-smi not found: this check needs an NVIDIA GPU and driver" >&2; exit 2; }
command -v python3 >/dev/null || { echo "check.sh: python3 not found" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== gpubridge gres inventory --json"
"$bin" gres inventory --json >"$tmp/inventory.json"
echo "== gpubridge gres generate (explicit lines, AutoDetect=nvml variant, slurm.conf lines)"
"$bin" gres generate --fixture "$tmp/inventory.json" --node check-node --skip-lost >"$tmp/gres.conf"
"$bin" gres generate --fixture "$tmp/inventory.json" --node check-node --skip-lost --autodetect >"$tmp/gres-autodetect.conf"
"$bin" gres generate --fixture "$tmp/inventory.json" --node check-node --skip-lost --slurm-conf >"$tmp/slurm.conf"
echo "== nvidia-smi -L"
nvidia-smi -L | tee "$tmp/smi-L.txt"
echo "== nvidia-smi mig -lgi"
# Exits non-zero when no GPU has MIG enabled; that is a valid state here.
nvidia-smi mig -lgi >"$tmp/smi-lgi.txt" 2>&1 || true
cat "$tmp/smi-lgi.txt"

python3 - "$tmp" <<'PY'
import json, re, sys, os
d = sys.argv[1]
inv = json.load(open(os.path.join(d, "inventory.json")))
smi_l = open(os.path.join(d, "smi-L.txt")).read().splitlines()
lgi = open(os.path.join(d, "smi-lgi.txt")).read()
gres = open(os.path.join(d, "gres.conf")).read()
auto = open(os.path.join(d, "gres-autodetect.conf")).read()
results = []
def check(name, ok, detail=""):
    results.append(ok)
    print(("PASS  " if ok else "FAIL  ") + name + (("\n      " + detail) if detail and not ok else ""))

# nvidia-smi -L: "GPU 0: NAME (UUID: GPU-...)" and "  MIG 1g.10gb Device 0: (UUID: MIG-...)"
smi_gpus, smi_migs, cur = [], {}, None
for line in smi_l:
    m = re.match(r"^GPU (\d+): (.*) \(UUID: (\S+)\)$", line.strip())
    if m:
        cur = int(m.group(1))
        smi_gpus.append((cur, m.group(2), m.group(3)))
        smi_migs[cur] = []
        continue
    m = re.match(r"^MIG (\S+)\s+Device\s+(\d+): \(UUID: (\S+)\)$", line.strip())
    if m and cur is not None:
        smi_migs[cur].append((m.group(1), m.group(3)))

gpus = [g for g in inv["gpus"] if not g.get("lost")]
lost = [g["index"] for g in inv["gpus"] if g.get("lost")]
check("no GPU lost by NVML", not lost, "lost: %s" % lost)
check("GPU count: inventory %d, nvidia-smi -L %d" % (len(inv["gpus"]), len(smi_gpus)), len(inv["gpus"]) == len(smi_gpus))
check("GPU UUIDs match nvidia-smi -L",
      sorted(g["uuid"] for g in gpus) == sorted(u for _, _, u in smi_gpus),
      "inventory %s\n      nvidia-smi %s" % (sorted(g["uuid"] for g in gpus), sorted(u for _, _, u in smi_gpus)))
byidx = {i: (n, u) for i, n, u in smi_gpus}
check("GPU names match nvidia-smi -L",
      all(byidx.get(g["index"], ("", ""))[0] == g["name"] for g in gpus),
      str([(g["index"], g["name"], byidx.get(g["index"])) for g in gpus]))
for g in gpus:
    want = sorted((m["profile"], m["uuid"]) for m in g.get("migDevices", []))
    got = sorted(smi_migs.get(g["index"], []))
    check("GPU %d: MIG devices (profile, UUID) match nvidia-smi -L (%d)" % (g["index"], len(got)), want == got,
          "inventory %s\n      nvidia-smi %s" % (want, got))

# nvidia-smi mig -lgi rows: | GPU  MIG <profile>  <profile id>  <GI id>  <start>:<size> |
gis = set()
for m in re.finditer(r"\|\s+(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+):(\d+)\s+\|", lgi):
    gis.add((int(m.group(1)), m.group(2), int(m.group(4)), int(m.group(5)), int(m.group(6))))
inv_gis = set()
for g in gpus:
    for m in g.get("migDevices", []):
        prof = m["profile"].split("c.", 1)[1] if "c." in m["profile"] else m["profile"]
        inv_gis.add((g["index"], prof, m["gpuInstanceId"], m["placement"]["start"], m["placement"]["size"]))
check("GPU instances (GPU, profile, GI id, placement) match nvidia-smi mig -lgi (%d)" % len(gis), gis == inv_gis,
      "only in inventory %s\n      only in nvidia-smi %s" % (sorted(inv_gis - gis), sorted(gis - inv_gis)))

# gres.conf: one explicit line per MIG device and per whole GPU; each Type a substring of
# the autodetect name listed in the AutoDetect=nvml variant.
want_lines = sum(len(g.get("migDevices", [])) if g.get("migCurrent") == "enabled" else 1 for g in gpus)
lines = [l for l in gres.splitlines() if l.startswith("NodeName=")]
check("gres.conf has one line per GRES device (%d)" % want_lines, len(lines) == want_lines, "%d lines" % len(lines))
names = re.findall(r"^#\s+\d+x (\S+)\s+-> type (\S+)$", auto, re.M)
check("every type is a substring of the name slurmd's NVML autodetect reports",
      bool(names) and all(t.lower() in n.lower() for n, t in names), str(names))
files = sorted({f for g in gpus for m in g.get("migDevices", []) for f in m["files"]} |
               {"/dev/nvidia%d" % g["minor"] for g in gpus})
missing = [f for f in files if not os.path.exists(f)]
check("the %d device files of the inventory exist" % len(files), not missing, "missing: %s" % missing)

print()
print("SUMMARY: %s (%d checks, %d failed)" % ("PASS" if all(results) else "FAIL", len(results), results.count(False)))
sys.exit(0 if all(results) else 1)
PY
