// Package spend is the burst controller's adapter to the usage ledger and
// the rate card: the month's booked on-demand spend per tenant (ledger lines
// of the ondemand tier booked in the current period, priced with the
// current rate card) and the on-demand rate per GPU type.
//
// Accruals (the month-to-date part of still-running runs) are deliberately
// not read: the controller estimates every in-flight on-demand job at its
// whole time limit, which already includes the part an accrual would hold.
//
// It may import accounting/ledger, accounting/pricing, accounting/meter and
// burst; only cmd/ and tests import it.
package spend
