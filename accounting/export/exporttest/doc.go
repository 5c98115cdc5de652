// Package exporttest runs the FOCUS conformance checks (focuscheck) over
// gpubridge's FOCUS exports, for the exporter's tests and the accounting
// integration tests. It does not import accounting/export, so the
// exporter's own tests can use it.
package exporttest
