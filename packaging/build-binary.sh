#!/usr/bin/env bash
# build-binary.sh OUT VERSION: the gpubridge binary of the packages, with cgo (the NVML adapter)
# linked against the glibc 2.31 sysroot of packaging/sysroot.sh, so that it needs no glibc symbol
# version newer than docs/install.md's floor (2.28: RHEL 8). `make build` links against the
# build host's glibc instead (2.36 on Debian 12: GLIBC_2.34 symbols).
# PKG_SYSROOT names another sysroot (a directory with usr/include and usr/lib/<triplet>).
set -euo pipefail
(($# == 2)) || { echo "usage: $0 OUT VERSION" >&2; exit 2; }
out=$1 version=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
sysroot=${PKG_SYSROOT:-$("$here/sysroot.sh")}
lib=$sysroot/usr/lib/x86_64-linux-gnu
# --sysroot moves the header and library search; -B and -L also move gcc's own multiarch
# directories (crt1.o, libc.so), which --sysroot alone leaves on the host's.
export CC="gcc --sysroot=$sysroot -B$lib -L$lib -L$sysroot/lib/x86_64-linux-gnu"
export CGO_ENABLED=1
cd "$here/.."
# -s -w: no symbol table and DWARF (as distributions strip their binaries; stack traces keep
# their function names and lines).
go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$out" ./cmd/gpubridge
