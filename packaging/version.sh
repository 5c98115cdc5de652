#!/usr/bin/env bash
# version.sh [GIT_DESCRIBE]: the packages' version (the same string for the .deb and the .rpm)
# from `git describe --tags --always --dirty` (its output when no argument is given).
#
# Versions start with a digit: a tag v1.2.3 gives 1.2.3; a build 4 commits after it
# 1.2.3+4.gabc1234 (sorting after the tag in dpkg and rpm alike); anything else, e.g. a tree
# without a tag, 0.0.0~git<commit time>.<hash> ('~' sorts before 0.0.0, so any tagged release
# replaces such a snapshot); a dirty tree adds +dirty. Tags are never made here: they are the
# release's (docs/install.md, "Versions").
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
v=${1:-$(git -C "$repo" describe --tags --always --dirty 2>/dev/null || echo dev)}
dirty=
[[ $v == *-dirty ]] && { dirty=+dirty; v=${v%-dirty}; }
if [[ $v =~ ^v?([0-9]+(\.[0-9]+)+([~+][A-Za-z0-9.~+]*)?)(-([0-9]+)-g([0-9a-f]+))?$ ]]; then
  v=${BASH_REMATCH[1]}
  [[ -n ${BASH_REMATCH[5]} ]] && v+="+${BASH_REMATCH[5]}.g${BASH_REMATCH[6]}"
  echo "$v$dirty"
  exit 0
fi
when=$(TZ=UTC git -C "$repo" log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S 2>/dev/null || date -u +%Y%m%d%H%M%S)
hash=$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
echo "0.0.0~git$when.$hash$dirty"
