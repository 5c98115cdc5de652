// Package golden is the one golden-file helper of the tests: Check compares
// what a test produced with a file kept in the repository (testdata/, or
// test/fixtures/), and `go test -update` rewrites the files instead.
//
// It registers the -update flag, so a test binary must not define its own.
// Only tests import it.
package golden
