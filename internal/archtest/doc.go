// Package archtest holds the dependency-direction test (`make check-deps`):
// pure domain packages must not import I/O packages or adapters.
package archtest
