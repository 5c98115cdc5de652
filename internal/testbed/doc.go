// Package testbed gives integration tests access to the local Slurm testbed
// that `make testbed-up` starts (test/testbed/up.sh) and describes in
// .testbed/env. A test that needs it calls Require; when the testbed is not
// configured or not reachable the test FAILS with instructions, it never
// skips: a skipped integration test proves nothing.
//
// Only _test files, test/ code and the test helper
// accounting/internal/acctest import this package.
package testbed
