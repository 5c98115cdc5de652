// Package table prints command results the way sacctmgr does: an aligned
// table by default, '|'-separated with -P/--parsable2 (and with a '|' after
// the last field too with -p/--parsable), without the header line with
// -n/--noheader, or as JSON with --json: an array of objects whose number
// columns are JSON numbers, or the command's typed value.
//
// The same Options carry the sacctmgr selection every `show` takes:
// format= picks and orders the columns, `where COL=VALUE` keeps the rows
// (internal/kv parses both). One mechanism for every command: the
// commands build a whole Table and Write selects.
//
// It is pure formatting; it imports only internal/kv.
package table
