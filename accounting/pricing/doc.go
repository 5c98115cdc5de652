// Package pricing holds rate cards and turns GPU-seconds into money. It is
// pure: integer arithmetic only, no floats, no I/O.
//
// # Rate card
//
// A [Card] prices one GPU-hour per GPU type and tier in one currency, with
// effective dates ([Rate.From], 00:00 UTC, inclusive). A line is priced at the
// rate in effect at the start of the line (its run clipped to the period):
// of the rates for its type that apply to its tier and are effective then,
// the one with the latest From wins, and a tier-specific rate beats a rate
// for both tiers from the same day.
//
// # MIG slices
//
// A MIG profile type (e.g. "1g.10gb") with no rate of its own costs its
// parent GPU's rate × compute slices / parent slices (7 for the A100, H100,
// H200 and B200 families). The parent is declared in the card
// ([GPUType.Parent]): Slurm records only the profile name, and one profile
// name can exist on several GPU models, so the mapping is the admin's, read
// off the MIG layout `gpubridge gres generate` planned for each node. Compute
// slices default to the number before "g." in the profile name.
//
// # Money
//
// Prices are decimals with up to 9 fractional digits, held as integer
// billionths of the currency ([Price]), at most [MaxPriceWhole] per
// GPU-hour. Amounts are internal/money.Amount values in the card's
// currency ([Card.Unit]: the ISO 4217 exponent of Currency, or
// MinorUnits): cents for EUR, yen for JPY, fils for KWD. An unknown
// currency is refused unless MinorUnits says how to count it. Each ledger line is
// rounded exactly once: amount = GPU-seconds × price per hour × weight /
// 3600, computed exactly (128-bit integers, math/big beyond) and rounded half
// away from zero to the minor unit (half-up for charges; a reversal rounds to
// exactly minus the original). Totals are the sum of the rounded lines, never
// re-priced from summed seconds, so an invoice adds up.
//
// A type with no rate is an error ([MissingRatesError]), never priced at 0.
//
// [LinePricer] prices many lines exactly as [Card.PriceLine] does, looking
// each quote up once per type, tier and UTC day (rates take effect at
// 00:00 UTC, so every instant of a day has the same quote): the exports
// price a month of ~400k lines with it.
//
// # Bookings
//
// The booked tier prices booking charges; only a rate that names it
// applies (a rate without a tier prices reserved and ondemand), so a
// booking whose type has no booked rate is missing its rate, never charged
// at a usage rate or 0. Use inside a booking (tier booked, not a charge)
// is priced at 0, its quote carrying the booked rate as its list price
// ([InsideBookingBasis]).
//
// # The price list
//
// For FOCUS, a GPU type is a SKU ([SkuID], "gpu-h100") and a type in a tier
// a SKU price ([SkuPriceID], "gpu-h100-reserved"), an identifier without
// price, currency or date that stays the same when the price changes.
// [Card.PriceList] lists each SKU price's price per GPU-hour from each
// date it changes; [Card.SkuMeter] and [Card.SkuPriceDetails] describe it
// (a MIG profile's parent and slices).
//
// A card file is read strictly ([ParseYAML]): unknown fields, files over
// [MaxCardBytes], and unquoted numbers that YAML would round (more than 15
// significant digits, exponents, .inf) are refused with the field and the
// fix.
//
// It is pure: no database, HTTP or adapter.
package pricing
