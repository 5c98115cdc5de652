// Package front is a front end: it serves through the adapter and names
// core's service.
package front

import (
	"example.com/fakemod/adapter"
	"example.com/fakemod/core"
)

// Start serves the service's price.
func Start() { adapter.Serve(core.Service{}.Price(1)) }
