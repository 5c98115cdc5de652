// Package kv parses sacctmgr-style command arguments: positional names and
// key=value pairs (`acme gpus=h100:16 users=alice,bob`), with the `set` and
// `where` keywords that modify and show commands use. Keys are
// case-insensitive; values keep their case.
//
// An unknown key is an error that lists the known ones and, when one is
// close, asks "did you mean" (Suggest, the one key matcher of the CLI and
// the configuration). A change given without `set` to a command that takes
// its changes after `set` is refused with the argument list fixed. A
// command that prints a table (Spec.Columns) also takes format= and column
// filters; internal/table applies them.
//
// Pure; any package may import it (the commands do).
package kv
