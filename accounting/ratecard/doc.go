// Package ratecard is the current rate card: its stored versions and the
// edits admins make to it. It is its own store, apart from the usage
// ledger: a card prices lines, it is not one.
//
// [DB] keeps every version in MariaDB (table rate_card, insert-only, the
// highest id current; each save audited); [Memory] is the in-memory store
// for tests; both satisfy [Store]. The edits ([Load], [AddRate],
// [DeleteRate], [AddGPUType]) read the current card, apply one change
// through pricing's pure Card methods, validate, and save a new version;
// [Rows] is what `show rates` lists. The CLI, the daemon and the coming
// tenant API call the same functions.
//
// Input errors (a file too large, a currency mismatch, a missing first
// currency) are [InputError]s or pricing.ValidationErrors, so a front end
// can tell the user's mistake from a failure.
package ratecard
