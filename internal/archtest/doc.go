// Package archtest enforces the module's layout (`make check-deps`): the
// table in layout.go gives every package an entry (pure or not, and which
// packages may import it), and Check fails the test when a package has no
// entry, an entry names a package that does not exist, a package is
// imported by one its entry does not list, a pure package depends (even
// through others) on I/O or on an impure package, or an edge across the
// domain folders (bridge, accounting, gres) has no reason written down.
// The tests run Check on this module and on small fake modules in
// testdata/ with one planted violation of each rule.
//
// It runs `go list` and is imported by nobody.
package archtest
