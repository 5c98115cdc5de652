#!/usr/bin/env bash
# axe.sh: fetch the pinned axe-core (npm) for the portal's browser test and
# print the path of its axe.min.js. The tarball comes from the npm registry
# through `npm pack` (never a CDN), is checked against the sha512 integrity
# pinned here before anything of it is used, and is kept in
# .testbed/cache/axe-core-VERSION (a second run only prints the path).
#
#   test/portal/axe.sh            # -> .../.testbed/cache/axe-core-4.14.1/package/axe.min.js
#
# To move to another version: change VERSION and INTEGRITY together (npm view
# axe-core@VERSION dist.integrity) and run the browser test.
set -euo pipefail

VERSION=4.14.1
INTEGRITY='sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ=='

root=$(cd "$(dirname "$0")/../.." && pwd)
dir="$root/.testbed/cache/axe-core-$VERSION"
js="$dir/package/axe.min.js"
if [[ -s "$js" && -f "$dir/verified" ]]; then
	echo "$js"
	exit 0
fi
command -v npm >/dev/null || { echo "axe.sh: npm is not installed (Debian package npm)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/axe.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "axe-core@$VERSION" >/dev/null)
tgz="$tmp/axe-core-$VERSION.tgz"
[[ -s "$tgz" ]] || { echo "axe.sh: npm pack axe-core@$VERSION gave no $tgz" >&2; exit 1; }
got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
if [[ "$got" != "$INTEGRITY" ]]; then
	echo "axe.sh: axe-core-$VERSION.tgz has integrity $got; want $INTEGRITY (refused)" >&2
	exit 1
fi
rm -rf "$dir"
mkdir -p "$dir"
tar -xzf "$tgz" -C "$dir" package/axe.min.js package/LICENSE package/package.json
echo "$INTEGRITY" >"$dir/verified"
echo "$js"
