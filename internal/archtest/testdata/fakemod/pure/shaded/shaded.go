// Package shaded is pure and imports nothing.
package shaded

// Nothing does nothing.
func Nothing() {}
