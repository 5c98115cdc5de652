// Package export prices a period's ledger lines and writes the chargeback:
// a summary per tenant, GPU type and tier (GPU-seconds, GPU-hours, rate,
// amount), optional job line items, as CSV, JSON, or a CSV that follows
// the FinOps FOCUS specification (1.0 columns) so finance tools can load it.
//
// Every line is priced once ([pricing.Card.PriceLine], rounded half away
// from zero to the minor unit); summary and totals are sums of line
// amounts, so they always add up. A line with no rate fails the export
// with one error listing every unpriced type: nothing is priced at zero.
//
// Output is deterministic (sorted, no timestamps of its own): the export of
// a closed period, priced with the rate card and tenant labels stored at
// close, is the same bytes every time.
//
// Exports are safe to open in a spreadsheet: every CSV and FOCUS cell that
// starts with = + - @, a tab or a carriage return (and is not a plain
// number) gets a leading apostrophe and quotes ([Neutralize], OWASP CSV
// injection). [WriteFile] writes a file through internal/atomicfile (a
// temporary file, fsync, rename, mode 0640), so a failed export leaves the
// previous file intact.
//
// Lines come in through [Lines], so this package does not depend on how
// the ledger is stored; it must not import database or HTTP packages.
// Its callers are accounting/billing (the period view) and cmd/.
package export
