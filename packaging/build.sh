#!/usr/bin/env bash
# build.sh FORMAT BIN MANDIR OUTDIR VERSION: the gpubridge package (FORMAT deb or rpm) from
# packaging/nfpm.yaml, the one description of both, with nfpm (packaging/go.mod's tool). Run by
# `make deb`, `make rpm` and `make packages`, which build BIN (packaging/build-binary.sh) and the
# man pages first. Prints the package's path on its last line.
#
# Environment: PKG_MAINTAINER ("Name <address>"), PKG_GLIBC_FLOOR (the newest glibc symbol
# version BIN may need; default 2.28, docs/install.md), SOURCE_DATE_EPOCH (default: the last
# commit's time, for reproducible packages).
set -euo pipefail
(($# == 5)) || { echo "usage: $0 deb|rpm BIN MANDIR OUTDIR VERSION" >&2; exit 2; }
format=$1 bin=$2 mandir=$3 out=$4 describe=$5
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
[[ $format == deb || $format == rpm ]] || { echo "build.sh: format $format: want deb or rpm" >&2; exit 2; }
[[ -x $bin ]] || { echo "build.sh: $bin is not an executable (make deb builds it)" >&2; exit 1; }
compgen -G "$mandir/*.1" >/dev/null || { echo "build.sh: no man pages in $mandir (make man)" >&2; exit 1; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
mandir=$(cd "$mandir" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)

version=$("$here/version.sh" "$describe")

# The binary's architecture from its ELF header (e_machine), without file(1).
case $(od -An -tx1 -j18 -N2 "$bin" | tr -d ' \n') in
  3e00) arch=amd64 rpmarch=x86_64 ;;
  b700) arch=arm64 rpmarch=aarch64 ;;
  *) echo "build.sh: $bin is not an amd64 or arm64 ELF binary" >&2; exit 1 ;;
esac
# The newest glibc symbol version the binary needs: the packages' dependency, and at most the
# documented floor (a binary linked against the build host's newer glibc is refused).
floor=${PKG_GLIBC_FLOOR:-2.28}
glibc=$(objdump -T "$bin" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1 || true)
[[ -n $glibc ]] || glibc=2.2.5 # a static binary needs none
if [[ $(printf '%s\n%s\n' "$glibc" "$floor" | sort -V | tail -1) != "$floor" ]]; then
  echo "build.sh: $bin needs GLIBC_$glibc, newer than the floor $floor (docs/install.md): build it with packaging/build-binary.sh" >&2
  exit 1
fi

# A release (a tag, no commits after it, a clean tree) has its section in CHANGELOG.md.
if [[ $describe =~ ^v?[0-9]+(\.[0-9]+)+(~[A-Za-z0-9.]+)?$ ]] && ! grep -qE "^## \[?v?${version//./\\.}\]?( |$)" "$repo/CHANGELOG.md"; then
  echo "build.sh: CHANGELOG.md has no section \"## [$version]\" for this release" >&2
  exit 1
fi

stage=$(mktemp -d "${TMPDIR:-/tmp}/gpubridge-pkg.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/man" "$stage/completion"
for p in "$mandir"/*.1; do gzip -9n <"$p" >"$stage/man/$(basename "$p").gz"; done
"$bin" completion bash >"$stage/completion/gpubridge.bash"
"$bin" completion zsh >"$stage/completion/_gpubridge"
"$bin" completion fish >"$stage/completion/gpubridge.fish"
# The unit of contrib/ runs /usr/local/bin/gpubridge (a copy installed by hand); the package's is /usr/bin.
sed 's#/usr/local/bin/gpubridge#/usr/bin/gpubridge#g' "$repo/contrib/gpubridge.service" >"$stage/gpubridge.service"
grep -q '^ExecStart=/usr/bin/gpubridge serve ' "$stage/gpubridge.service" ||
  { echo "build.sh: the unit's ExecStart is not /usr/bin/gpubridge serve" >&2; exit 1; }

case $format in
  deb) pkg=$out/gpubridge_${version}_$arch.deb ;;
  rpm) pkg=$out/gpubridge-$version-1.$rpmarch.rpm ;;
esac
export PKG_VERSION=$version PKG_ARCH=$arch PKG_BIN=$bin PKG_STAGE=$stage PKG_GLIBC=$glibc
export PKG_MAINTAINER=${PKG_MAINTAINER:-gpubridge maintainers <gpubridge@users.noreply.github.com>}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)}
rm -f "$pkg"
(cd "$repo" && go tool -modfile="$here/go.mod" nfpm package --config "$here/nfpm.yaml" --packager "$format" --target "${pkg#"$repo/"}" >&2)
echo "${pkg#"$repo/"}"
