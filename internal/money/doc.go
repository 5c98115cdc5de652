// Package money is gpubridge's one money type: [Amount], an exact decimal
// amount that carries the digits of its currency's minor unit, and
// [Currency], an ISO 4217 code with its exponent (EUR 2, JPY 0, KWD 3).
//
// A tenant's burst budget is written ("2500.00") before any currency is
// known: it is an Amount without a currency, kept exactly as a decimal,
// until it meets the rate card's currency ([Amount.In]), which converts it
// exactly or refuses it (2500.50 has no value in JPY). Amounts of one
// currency add, subtract and compare; amounts of different currencies
// refuse to. Every operation checks for int64 overflow and returns an
// error instead of a wrong number.
//
// It is pure (no I/O) and imports nothing of gpubridge: the tenant model,
// pricing, exports and the burst controller all import it.
package money
