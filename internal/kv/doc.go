// Package kv parses sacctmgr-style command arguments: positional names and
// key=value pairs (`acme gpus=h100:16 users=alice,bob`), with the `set` and
// `where` keywords that modify commands use. Keys are case-insensitive;
// values keep their case. Unknown keys are an error that lists the known ones.
//
// Pure; any package may import it (the commands do).
package kv
