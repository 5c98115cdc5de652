// Package table prints command results the way sacctmgr does: an aligned
// table by default, '|'-separated with -P/--parsable2, without the header
// line with -n/--noheader, or as a JSON array of objects with --json.
//
// It is pure formatting; it imports nothing from gpubridge, and only
// cmd/gpubridge imports it.
package table
