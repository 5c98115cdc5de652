// Package ledgeradapter implements the node health credit job's ports
// (bridge/health/credit's Source and Ledger) over the books: the ledger's
// charged runs with the end states Slurm's accounting recorded
// (accounting/billing's RunEnds), the rate cards they were priced with,
// the bookings' placements, and the ledger's credit lines.
package ledgeradapter
