#!/usr/bin/env bash
# oldglibc.sh: print the path of a root holding an older glibc than docs/install.md's floor
# (2.28, RHEL 8): Ubuntu 18.04 (bionic)'s libc6 2.27, making it first when missing (once; one
# 2.8 MB download). test/install (TestPackagedBinaryGlibc) runs the packaged binary with that
# root's loader and libraries: a binary that runs on glibc 2.27 runs on every newer one.
#
# Why Ubuntu's: no RHEL 8, Debian 10 or other glibc-2.28 archive is reachable from where the
# tests run; Ubuntu's archive keeps bionic. Its keyring is not in Debian 12, so the package is
# checked against the SHA256 that bionic's signed Packages index gives for it (pinned below).
#
# Environment: GPUBRIDGE_OLDGLIBC (default /var/cache/gpubridge/glibc-2.27-bionic-amd64),
# OLDGLIBC_MIRROR (default http://archive.ubuntu.com/ubuntu).
set -euo pipefail
dir=${GPUBRIDGE_OLDGLIBC:-/var/cache/gpubridge/glibc-2.27-bionic-amd64}
mirror=${OLDGLIBC_MIRROR:-http://archive.ubuntu.com/ubuntu}
file=pool/main/g/glibc/libc6_2.27-3ubuntu1_amd64.deb
sha256=1e1eb86fd646aa68f7144ec692b837b6b352d215880c6a2d0c92c19d36938427

if [[ -f $dir/.complete ]]; then
  echo "$dir"
  exit 0
fi
[[ $(dpkg --print-architecture) == amd64 ]] || { echo "oldglibc.sh: only amd64 hosts are supported" >&2; exit 1; }
mkdir -p "$(dirname "$dir")"
work=$(mktemp -d "$(dirname "$dir")/.oldglibc.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "oldglibc.sh: fetching $mirror/$file into $dir" >&2
curl -fsSL --retry 3 -o "$work/libc6.deb" "$mirror/$file"
echo "$sha256  $work/libc6.deb" | sha256sum -c --quiet - || { echo "oldglibc.sh: $file does not have the pinned SHA256" >&2; exit 1; }
mkdir "$work/root"
dpkg-deb -x "$work/libc6.deb" "$work/root"
[[ -x $work/root/lib/x86_64-linux-gnu/ld-2.27.so ]] || { echo "oldglibc.sh: no ld-2.27.so in $file" >&2; exit 1; }
touch "$work/root/.complete"
rm -rf "$dir"
mv "$work/root" "$dir"
echo "$dir"
