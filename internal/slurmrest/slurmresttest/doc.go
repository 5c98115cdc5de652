// Package slurmresttest builds slurmrest clients for integration tests on
// the testbed (test/testbed), directly or through a fault proxy, and
// removes the Slurm objects a test makes. Only tests import it.
package slurmresttest
