// Package docs runs the documentation's examples: every fenced block of
// README.md and docs/*.md that shows a command and its output (a line
// `$ COMMAND` followed by the lines it prints) is extracted, run in order
// per document in one shell session, and its output compared with the
// text, after a short, explicit list of rules (Rules) has replaced the
// parts that vary from run to run (times, durations, tokens, ports, job
// and process ids); a line "..." in the text stands for any lines.
//
// Marks in the Markdown, HTML comments a reader of the rendered page does
// not see:
//   - `<!-- doc-test: skip REASON -->` before a block: not run, counted
//     and reported with its reason; only for a block that cannot run here
//     (a real GPU, a package build or install);
//   - `<!-- doc-test: setup COMMAND -->`: COMMAND runs before the next
//     block's commands (the state the text assumes without showing it);
//   - `<!-- doc-test: file NAME -->` before a block: its content is
//     written to NAME before the next block's commands (a file the text
//     shows, then uses).
//   - `<!-- doc-test: teardown COMMAND -->`: COMMAND runs when the
//     document ends, passed or not (it undoes what a setup wrote outside
//     the document's own database and tenants, such as rows of slurmdbd's
//     database).
//
// The harness (Extract, Match, Session, Run, Rewrite) is tested without
// the testbed (harness_test.go: a planted drift fails, the true text
// passes). docs_integration_test.go runs the repository's documents on the
// testbed, each on a scratch gpubridge database of its own (after making
// the shared on-demand QOS, so that no first apply depends on an earlier
// test), and prints how many examples it found, ran and skipped, checking
// that those run and skipped add up to those found;
// it fails on any drift (pending_integration_test.go's map of examples
// whose drifts would only be logged is empty, and TestPendingIsEmpty keeps
// it so). A document's examples that need exact figures bill job rows
// written into slurmdbd's job table by jobrows.sh (in past months, removed
// by a teardown mark); a table's JobID column and the tenant API's job ids
// are the run's own (JobColumns, Rules). DOCTEST_ONLY=docs/a.md,... runs only those
// documents; DOCTEST_UPDATE=DIR writes each document that drifted to
// DIR/<document> with what the commands printed in place of the text's
// output, for a person to review with diff. Imported by nobody.
package docs
