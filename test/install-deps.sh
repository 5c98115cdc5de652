#!/usr/bin/env bash
# Install what building and testing gpubridge need on Debian 12 (as root); idempotent and
# fast (well under a second) when everything is present. apt-get update runs only when a
# package is missing. Go is expected at /usr/local/go; Go modules are downloaded when missing.
set -euo pipefail

PKGS=(debootstrap zstd gcc make git ca-certificates curl jq openssl)

declare -A ok=()
while read -r pkg status; do
  [[ $status == installed ]] && ok[${pkg%%:*}]=1
done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${PKGS[@]}" 2>/dev/null || true)
missing=()
for pkg in "${PKGS[@]}"; do [[ -n ${ok[$pkg]:-} ]] || missing+=("$pkg"); done

if ((${#missing[@]})); then
  [[ $(id -u) == 0 ]] || { echo "install-deps: missing ${missing[*]}; run as root" >&2; exit 1; }
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

export PATH=/usr/local/go/bin:$PATH
if ! command -v go >/dev/null 2>&1; then
  echo "install-deps: Go is missing: expected at /usr/local/go (/usr/local/go/bin/go); install the Go toolchain there" >&2
  exit 1
fi
go version >/dev/null || { echo "install-deps: 'go version' failed" >&2; exit 1; }

# Go modules of this repository (a no-op when the module cache already has them).
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ -f go.mod ]]; then
  GOFLAGS=-mod=mod go mod download || { echo "install-deps: go mod download failed" >&2; exit 1; }
fi
