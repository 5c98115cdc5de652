// Package credit computes the credits node health owes tenants: a job run
// that ended NODE_FAIL or was killed when gpubridge stopped its node is
// credited exactly its charged amount, and booked GPU-hours lost while
// gpubridge held a booked node are credited at the booked rate; each
// credit links to the health event (drain) behind it and carries an
// idempotency key, so computing again adds nothing. Amounts are
// internal/money amounts; a booking's loss is priced as its charge was
// (Booking.Price), else at its rate rounded down (never more than was
// charged), and refused when it would overflow.
//
// It is pure (Compute, Drains, ReportTable). The ledger write is a port
// (Ledger) and so are the inputs (Source): accounting/billing implements
// both over the ledger (CreditSource, CreditWriter, built by CreditSetup;
// the bookings' placements come from cmd/gpubridge/app.BookedPlacements); Job
// is the periodic job over them (`gpubridge credit run-once`, the daemon's
// schedules.healthCredits), Observer its metrics (credit/metrics).
//
// It imports bridge/health and internal/money only; it must not import database, HTTP or
// adapter packages.
package credit
