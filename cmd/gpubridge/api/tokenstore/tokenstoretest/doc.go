// Package tokenstoretest is the conformance suite every token store
// passes (the MariaDB one on the testbed, the in-memory one everywhere).
package tokenstoretest
