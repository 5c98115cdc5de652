// Package core is pure domain logic.
package core

import "example.com/fakemod/core/units"

// Price is a pure computation.
func Price(n int) int { return n * units.Cents }
