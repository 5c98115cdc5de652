// Package units is a pure helper of core.
package units

// Cents per unit.
const Cents = 100
