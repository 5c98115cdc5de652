// Package spend is the burst controller's adapter to the usage ledger and
// the rate card (burst.SpendReader, burst.RateReader): the month's booked
// on-demand spend per tenant (ledger lines of the ondemand tier booked in
// the current period, priced with the current rate card, read only for the
// accounts Source.Accounts lists and cached for Source.TTL) and the
// on-demand rate per GPU type, from the stored rate card (Source) or a
// given one (CardRates, for a rate card file).
//
// Accruals (the month-to-date part of still-running runs) are deliberately
// not read: the controller estimates every in-flight on-demand job at its
// whole time limit, which already includes the part an accrual would hold.
//
// It may import accounting/ledger, accounting/pricing, accounting/meter and
// burst (the one edge from bridge/ into accounting/ besides ingest's);
// only burst/service and tests import it.
package spend
