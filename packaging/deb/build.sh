#!/usr/bin/env bash
# build.sh BIN MANDIR OUTDIR VERSION: the gpubridge Debian package from a staged tree
# (dpkg-deb --build, no other packaging tools). Run by `make deb`, which builds BIN and the man
# pages first. Prints the path of the .deb on its last line.
set -euo pipefail
# build.sh --version-of GIT_DESCRIBE prints the Debian version only (tests).
if [[ ${1:-} == --version-of ]]; then debver_only=$2; set -- x x x x; fi
(($# == 4)) || { echo "usage: $0 BIN MANDIR OUTDIR VERSION" >&2; exit 2; }
bin=$1 mandir=$2 out=$3 version=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

# Debian versions start with a digit: a tag v1.2.3 gives 1.2.3, a build 4 commits after it
# 1.2.3+4.gabc1234 (sorting after the tag), anything else 0.0~git<commit time>.<hash>;
# a dirty tree adds +dirty.
debver() {
  local v=$1 dirty=
  [[ $v == *-dirty ]] && { dirty=+dirty; v=${v%-dirty}; }
  if [[ $v =~ ^v?([0-9]+(\.[0-9]+)+([~+][A-Za-z0-9.~+]*)?)(-([0-9]+)-g([0-9a-f]+))?$ ]]; then
    v=${BASH_REMATCH[1]}
    [[ -n ${BASH_REMATCH[5]} ]] && v+="+${BASH_REMATCH[5]}.g${BASH_REMATCH[6]}"
    echo "$v$dirty"
    return
  fi
  local when hash
  when=$(git -C "$repo" log -1 --format=%cd --date=format:%Y%m%d%H%M%S 2>/dev/null || date -u +%Y%m%d%H%M%S)
  hash=$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
  echo "0.0~git$when.$hash$dirty"
}
if [[ -n ${debver_only:-} ]]; then debver "$debver_only"; exit 0; fi
[[ -x $bin ]] || { echo "build.sh: $bin is not an executable (make build)" >&2; exit 1; }
compgen -G "$mandir/*.1" >/dev/null || { echo "build.sh: no man pages in $mandir (make man)" >&2; exit 1; }
deb_version=$(debver "$version")

# The binary's architecture from its ELF header (e_machine), without file(1).
case $(od -An -tx1 -j18 -N2 "$bin" | tr -d ' \n') in
  3e00) arch=amd64 ;;
  b700) arch=arm64 ;;
  *) echo "build.sh: $bin is not an amd64 or arm64 ELF binary" >&2; exit 1 ;;
esac
# The newest glibc symbol version the binary needs (cgo builds; a CGO_ENABLED=0
# build needs none).
glibc=$(objdump -T "$bin" 2>/dev/null | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1 || true)
depends="passwd"
[[ -n $glibc ]] && depends="libc6 (>= $glibc), $depends"

stage=$(mktemp -d "${TMPDIR:-/tmp}/gpubridge-deb.XXXXXX")
trap 'rm -rf "$stage"' EXIT
r=$stage/root
install -d "$r/DEBIAN" "$r/usr/bin" "$r/usr/lib/systemd/system" "$r/etc/gpubridge" \
  "$r/usr/share/man/man1" "$r/usr/share/doc/gpubridge/docs" "$r/usr/share/gpubridge/slurm" "$r/usr/share/gpubridge/sql" \
  "$r/usr/share/bash-completion/completions" "$r/usr/share/zsh/vendor-completions" "$r/usr/share/fish/vendor_completions.d"

install -m 0755 "$bin" "$r/usr/bin/gpubridge"
# The unit of contrib/ runs /usr/local/bin/gpubridge (a copy installed by hand); the package's is /usr/bin.
sed 's#/usr/local/bin/gpubridge#/usr/bin/gpubridge#g' "$repo/contrib/gpubridge.service" >"$r/usr/lib/systemd/system/gpubridge.service"
chmod 0644 "$r/usr/lib/systemd/system/gpubridge.service"
grep -q '^ExecStart=/usr/bin/gpubridge serve ' "$r/usr/lib/systemd/system/gpubridge.service" ||
  { echo "build.sh: the unit's ExecStart is not /usr/bin/gpubridge serve" >&2; exit 1; }
install -m 0640 "$repo/contrib/gpubridge.yaml.example" "$r/etc/gpubridge/gpubridge.yaml"
install -m 0644 "$repo/contrib/job_submit.lua" "$repo/contrib/job_submit_burst.lua" "$repo/contrib/job_submit_site.lua.example" "$r/usr/share/gpubridge/slurm/"
install -m 0644 "$repo/contrib/sql/setup.sql" "$r/usr/share/gpubridge/sql/"
install -m 0644 "$repo/contrib/gpubridge.yaml.example" "$r/usr/share/doc/gpubridge/"
install -m 0644 "$repo/README.md" "$r/usr/share/doc/gpubridge/"
install -m 0644 "$repo"/docs/*.md "$r/usr/share/doc/gpubridge/docs/"
install -m 0644 "$here/copyright" "$r/usr/share/doc/gpubridge/copyright"
for p in "$mandir"/*.1; do gzip -9n <"$p" >"$r/usr/share/man/man1/$(basename "$p").gz"; done
"$bin" completion bash >"$r/usr/share/bash-completion/completions/gpubridge"
"$bin" completion zsh >"$r/usr/share/zsh/vendor-completions/_gpubridge"
"$bin" completion fish >"$r/usr/share/fish/vendor_completions.d/gpubridge.fish"
chmod 0644 "$r"/usr/share/*/completions/gpubridge "$r"/usr/share/zsh/vendor-completions/_gpubridge "$r"/usr/share/fish/vendor_completions.d/gpubridge.fish

for s in postinst prerm postrm; do install -m 0755 "$here/$s" "$r/DEBIAN/$s"; done
echo /etc/gpubridge/gpubridge.yaml >"$r/DEBIAN/conffiles"
size=$(du -sk --exclude=DEBIAN "$r" | cut -f1)
sed -e "s/@VERSION@/$deb_version/" -e "s/@MAINTAINER@/${DEB_MAINTAINER:-gpubridge maintainers <root@localhost>}/" -e "s/@ARCH@/$arch/" -e "s/@DEPENDS@/$depends/" -e "s/@SIZE@/$size/" \
  "$here/control.in" >"$r/DEBIAN/control"
mkdir -p "$out"
deb=$out/gpubridge_${deb_version}_$arch.deb
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)} \
  dpkg-deb --root-owner-group -Zxz --build "$r" "$deb" >/dev/null
echo "$deb"
