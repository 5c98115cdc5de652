#!/usr/bin/env bash
# sysroot.sh: print the path of the C sysroot that the packaged gpubridge is linked against,
# making it first when missing (once; a few seconds and ~10 MB of downloads).
#
# Why: the cgo build (the NVML adapter) links against the build host's glibc, and a binary
# linked against glibc >= 2.34 needs GLIBC_2.34 symbol versions (dlopen, pthread_create,
# __libc_start_main moved into libc.so.6 then), which RHEL 8 (glibc 2.28) and Ubuntu 22.04's
# neighbours refuse. Linked against Debian 11's glibc 2.31 instead, the binary needs no symbol
# version newer than GLIBC_2.3.2 or so: the packages' floor is then the one docs/install.md names
# (glibc 2.28), checked by test/install (TestPackagedBinaryGlibc).
#
# The sysroot is Debian 11 (bullseye)'s libc6, libc6-dev and linux-libc-dev, fetched with apt-get
# download from Debian's archive (signatures checked against the host's debian-archive-keyring)
# through a private apt configuration: the host's sources and package state are not touched.
# The host's gcc links with --sysroot=DIR (the Makefile's PKG_CC).
#
# Environment: GPUBRIDGE_SYSROOT (default /var/cache/gpubridge/sysroot-bullseye-amd64),
# SYSROOT_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail
dir=${GPUBRIDGE_SYSROOT:-/var/cache/gpubridge/sysroot-bullseye-amd64}
mirror=${SYSROOT_MIRROR:-http://deb.debian.org/debian}
suite=bullseye
pkgs=(libc6 libc6-dev linux-libc-dev)

if [[ -f $dir/.complete ]]; then
  echo "$dir"
  exit 0
fi
[[ $(dpkg --print-architecture) == amd64 ]] || { echo "sysroot.sh: only amd64 build hosts are supported" >&2; exit 1; }
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[[ -r $keyring ]] || { echo "sysroot.sh: $keyring missing (package debian-archive-keyring)" >&2; exit 1; }

mkdir -p "$(dirname "$dir")"
work=$(mktemp -d "$(dirname "$dir")/.sysroot.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/apt/etc/preferences.d" "$work/debs" "$work/root"
echo "deb [signed-by=$keyring] $mirror $suite main" >"$work/apt/sources.list"
: >"$work/apt/status"
aptopts=(
  -o "Dir::Etc::SourceList=$work/apt/sources.list" -o "Dir::Etc::SourceParts=-"
  -o "Dir::Etc::Preferences=-" -o "Dir::Etc::PreferencesParts=$work/apt/etc/preferences.d"
  -o "Dir::State::Lists=$work/apt/lists" -o "Dir::State::Status=$work/apt/status"
  -o "Dir::Cache=$work/apt/cache" -o "APT::Architecture=amd64" -o "APT::Architectures::=amd64"
  -o "Debug::NoLocking=1" -o "Acquire::Languages=none" -o "APT::Sandbox::User=root"
)
echo "sysroot.sh: fetching ${pkgs[*]} of Debian $suite into $dir" >&2
apt-get "${aptopts[@]}" -qq update >&2
(cd "$work/debs" && apt-get "${aptopts[@]}" -qq download "${pkgs[@]}" >&2)
for d in "$work"/debs/*.deb; do dpkg-deb -x "$d" "$work/root"; done
# Absolute symlinks (libpthread.so -> /lib/x86_64-linux-gnu/libpthread.so.0, ...) would point at
# the build host's libraries: make them relative to the sysroot.
while IFS= read -r -d '' l; do
  t=$(readlink "$l")
  [[ $t == /* ]] || continue
  ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$work/root$t")" "$l"
done < <(find "$work/root" -type l -print0)
ls "$work"/debs/*.deb | xargs -n1 basename >"$work/root/.packages"
touch "$work/root/.complete"
rm -rf "$dir"
mv "$work/root" "$dir"
echo "$dir"
