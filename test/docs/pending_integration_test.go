//go:build integration

package docs

// pending lists the examples (Example.Key) whose drifts are logged rather
// than failed, each with why. It must stay empty: the doc test fails on
// any drift of any example (issue 27). An example that cannot run here
// carries a `<!-- doc-test: skip REASON -->` mark in its document instead,
// counted and reported with its reason; a drift that shows a bug of the
// code is fixed in the code. The mechanism is kept only so that a
// document being rewritten can be logged for one run on a branch; a
// non-empty map fails TestPendingIsEmpty.
var pending = map[string]string{}
