// Package interval is gpubridge's one half-open interval of Unix seconds
// and its set: [Interval] is [Start, End), and [Set] is a sorted list of
// disjoint intervals that the operations keep merged (no two members
// overlap or touch, none is empty), in the spirit of the tombstone
// intervals of Prometheus' TSDB.
//
// The accounting packages use it for the end-time ranges that ingest has
// covered or touched, the fresh parts of an ingest window, and the windows
// they read and price. A Set's operations never change the Set they are
// called on: each returns a new one, so a Set may be shared.
//
// Pure: it imports only the standard library, and any package may import
// it.
package interval
