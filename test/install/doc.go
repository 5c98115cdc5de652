// Package install holds the integration test of the production install
// (docs/install.md): `make deb`, the package installed in a fresh root made
// from the testbed's cached tarball, and its daemon started against the
// testbed. Run it through the testbed's use lock:
//
//	test/testbed/use.sh go test -tags integration -count=1 ./test/install/
package install

// repo is the repository's root, from this package's directory.
const repo = "../.."
