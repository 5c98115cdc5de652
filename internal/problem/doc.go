// Package problem is the one list of what is wrong with an input: each
// problem names its field and says what to do, and the list, as an error,
// states them all at once and that nothing was changed. A package keeps
// its own sentinel (errors.Is(err, pkg.ErrInvalid)) through a Kind:
//
//	type invalid struct{}
//
//	func (invalid) Sentinel() error { return ErrInvalid }
//
//	type Problems = problem.List[invalid]
//
// It is pure and imports only the standard library; any package may import it.
package problem
