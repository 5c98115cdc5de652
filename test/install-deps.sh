#!/usr/bin/env bash
# Install what building and testing gpubridge need on Debian 12 (as root); idempotent and
# fast (well under a second) when everything is present. apt-get update runs only when a
# package is missing. Go 1.26 is installed at /usr/local/go when missing; Go modules are downloaded
# when missing.
set -euo pipefail

# rpm, cpio, binutils: the packages' tests (rpm -qp, rpm2cpio, objdump; test/install).
PKGS=(debootstrap zstd gcc make git ca-certificates curl jq openssl lua5.1 chromium prometheus rpm cpio binutils debian-archive-keyring)

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

# Go: the toolchain this module needs (go.mod's go line). Debian 12 ships only Go 1.19, too old
# to build gpubridge and too old to switch toolchains by itself; but any go command can fetch the
# official toolchain as a module (golang.org/toolchain) from the configured Go module proxy, the
# same artefact GOTOOLCHAIN uses. So: Debian's go fetches it, and we install it at GO_ROOT_DIR.
GO_VERSION=${GO_VERSION:-1.26.8}
GO_ROOT_DIR=${GO_ROOT_DIR:-/usr/local/go}
install_go() {
  local boot tmp dir
  if ! boot=$(command -v go 2>/dev/null); then
    [[ $(id -u) == 0 ]] || { echo "install-deps: Go is missing; run as root to install it" >&2; exit 1; }
    echo "install-deps: Go missing: installing Debian's golang-go to fetch go$GO_VERSION"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends golang-go >/dev/null ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends golang-go >/dev/null; }
    boot=$(command -v go)
  fi
  tmp=$(mktemp -d)
  echo "install-deps: fetching go$GO_VERSION with $($boot version)"
  (cd "$tmp" && GOMODCACHE=$tmp/mod GOFLAGS=-mod=mod GO111MODULE=on "$boot" mod download golang.org/toolchain@v0.0.1-go$GO_VERSION.linux-amd64) ||
    { echo "install-deps: could not download go$GO_VERSION from the Go module proxy" >&2; chmod -R u+w "$tmp"; rm -rf "$tmp"; exit 1; }
  dir=$tmp/mod/golang.org/toolchain@v0.0.1-go$GO_VERSION.linux-amd64
  chmod -R u+w "$tmp"
  # Module zips do not keep the executable bit.
  chmod +x "$dir"/bin/* "$dir"/pkg/tool/*/*
  rm -rf "$GO_ROOT_DIR" && mkdir -p "$(dirname "$GO_ROOT_DIR")" && mv "$dir" "$GO_ROOT_DIR"
  rm -rf "$tmp"
  "$GO_ROOT_DIR/bin/go" version
}
export PATH=$GO_ROOT_DIR/bin:$PATH
if ! "$GO_ROOT_DIR/bin/go" version 2>/dev/null | grep -q "go$GO_VERSION\b\|go1\.2[6-9]\|go1\.[3-9][0-9]"; then
  install_go
fi
go version >/dev/null || { echo "install-deps: 'go version' failed" >&2; exit 1; }

# Go modules of this repository (a no-op when the module cache already has them).
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ -f go.mod ]]; then
  GOFLAGS=-mod=mod go mod download || { echo "install-deps: go mod download failed" >&2; exit 1; }
fi
# The packaging tool's module (nfpm, packaging/go.mod).
if [[ -f packaging/go.mod ]]; then
  (cd packaging && GOFLAGS=-mod=mod go mod download) || { echo "install-deps: go mod download (packaging) failed" >&2; exit 1; }
fi
