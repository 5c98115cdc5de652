// Package indirect reaches net/http only through the standard library
// (expvar imports net/http).
package indirect

import "expvar"

// Publish publishes a counter.
func Publish() { expvar.NewInt("n") }
