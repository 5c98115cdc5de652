// Package ledgertest is the conformance suite every ledger store must pass
// (the MariaDB store in integration tests, the in-memory one in unit tests),
// and the books' fixtures of the tests.
package ledgertest
