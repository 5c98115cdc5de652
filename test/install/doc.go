// Package install holds the tests of the packages and the production install
// (docs/install.md): `make packages` (the .deb and the .rpm of
// packaging/nfpm.yaml), the .deb installed in a fresh root made from the
// testbed's cached tarball and its daemon started against the testbed, the
// .rpm's header, files and scriptlets (and an rpm --root install of it), the
// packaged binary's glibc needs against the documented floor. Run them
// through the testbed's use lock:
//
//	test/testbed/use.sh go test -tags integration -count=1 ./test/install/
//
// TestPackageVersion (no tag) checks packaging/version.sh alone.
package install

// repo is the repository's root, from this package's directory.
const repo = "../.."
