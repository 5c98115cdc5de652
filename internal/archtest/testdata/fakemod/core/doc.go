// Package core is pure domain logic.
package core

import "example.com/fakemod/core/units"

// Price is a pure computation.
func Price(n int) int { return n * units.Cents }

// Service is core's service: what a front end must not name.
type Service struct{}

// Price is Price.
func (Service) Price(n int) int { return Price(n) }
