// Package fault is the fault suite's toolbox for integration tests on the
// testbed: stopping, killing and restarting single testbed daemons (through
// test/testbed/daemon.sh, always restarted when the test ends), and
// scratch databases. The proxy that injects network faults is
// test/fault/proxy.
//
// The suite itself is the integration tests named TestFault*: those of
// this directory (tenant apply against a failing slurmrestd) and those
// beside the code they break (accounting/ingest, which alone may use the
// accounting test helpers). Run it with
//
//	test/testbed/use.sh go test -tags integration -count=1 -p 1 -run '^TestFault' ./test/fault/ ./accounting/ingest/
//
// docs/operations.md lists each fault, what gpubridge does, and the
// suite's figures. Only tests import this package.
package fault
