// Package tenantstoretest is the conformance suite every tenant store
// must pass: the MariaDB store (bridge/tenantstore.Store, in integration
// tests on the testbed) and the in-memory one (tenantstore.Memory, in
// unit tests), so that tests written against the in-memory store hold
// for the real one.
package tenantstoretest
