// Package export prices a period's ledger lines and writes the chargeback:
// a summary per tenant, GPU type and tier (GPU-seconds, GPU-hours, rate,
// amount), optional job line items, as CSV, JSON, or a FinOps FOCUS 1.2
// dataset (a CSV) with its FOCUS metadata (JSON) so finance tools can load
// it (docs/chargeback.md describes every column; focuscheck holds it to
// the specification's rules).
//
// In the FOCUS dataset BilledCost and EffectiveCost are the invoice
// amounts (lines rounded once, as everywhere), while ListCost and
// ContractedCost are exactly ListUnitPrice × PricingQuantity as written,
// unrounded ([pricing.Price.Times]), as FOCUS requires. SkuId, SkuPriceId,
// SkuMeter and SkuPriceDetails come from the rate card
// ([pricing.SkuPriceID], [pricing.Card.PriceList]); InvoiceId is set once
// the period is closed ([InvoiceID]). [FOCUSMetadata] dates a closed
// period's metadata at its close, so both files stay the same bytes.
//
// Bookings: a booking's charge (kind booking) and the use inside it (tier
// booked, amount 0) are rows of their own with the booking's id (CSV and
// JSON "booking", FOCUS x_Booking); in FOCUS the charge is a Purchase
// (One-Time) of the commitment CommitmentID and the use inside it Usage at
// the Committed price, commitment Used. [Summary.Utilization] sets each
// booking's booked GPU-seconds against the used ones (pending, never a
// negative idle, while its charge is not written). Totals' GPU-seconds
// are the used ones; amounts include the charges. Every format writes
// used and booked GPU-seconds in columns of their own ([Row.Split]), so
// that each column adds up.
//
// For finance: the CSV's row_type marks each tenant's subtotal and the
// grand total after the lines ([RowLine], [RowSubtotal], [RowTotal]);
// every row names the tenant's profile (description, organization, cost
// centre: [Profiler]) and whether the account has a tenant; accounts
// without one can be left out ([Options].NoUntenanted).
//
// Every line is priced once ([pricing.Card.PriceLine], rounded half away
// from zero to the minor unit); summary and totals are sums of line
// amounts, so they always add up. A line with no rate fails the export
// with one error listing every unpriced type: nothing is priced at zero.
// Lines are priced with a [pricing.LinePricer] (the same quotes and
// amounts, each quote looked up once per type, tier and day) and summed
// per account, type, tier, kind, usage period, booking and rate as they
// stream in: the summary's pass reads only the fields it prices and
// groups by (see [Lines]). Per-line rounding is why the sums are not taken
// in SQL: a row's amount is the sum of its lines' rounded amounts, not its
// GPU-seconds priced once. reference_test.go holds the summary and the
// line items to a line-by-line computation on randomized ledgers.
//
// Output is deterministic (sorted, no timestamps of its own; the open
// period's metadata takes Meta.Now): the export of
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
// the ledger is stored.
package export
