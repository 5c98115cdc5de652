// Package docs runs the documentation's examples: every fenced block of
// README.md and docs/*.md that shows a command and its output (a line
// `$ COMMAND` followed by the lines it prints) is extracted, run in order
// per file, and its output compared with the text, after a short, explicit
// list of rules (Rules) has replaced the parts that vary from run to run
// (ids, times, tokens, durations, hosts). A block preceded by
// `<!-- doc-test: skip REASON -->` is counted and reported as skipped with
// its reason; only a block that cannot run here (a real GPU, a package
// install) may be marked so.
//
// The harness (Extract, Normalise, Match, Session) is tested without the
// testbed (harness_test.go: a planted drift fails, the true text passes);
// docs_integration_test.go runs the repository's documents against the
// testbed. Imported by nobody.
package docs
