// Package view lays out the booking ledger (bridge/reserve) for people:
// the tables of show bookings, show maintenance and find slot, the
// availability timeline with its capacity bars, the one-line audit
// summaries of bookings and maintenance windows, the confirmations and
// the messages of the booking commands, and the projection's report. The
// CLI prints them; the tenant API and the status page can use the same
// views.
//
// It is pure: it formats reserve's values (times through reserve.FormatTime
// in UTC or the admin's zone) into internal/table tables and strings, and
// does no I/O.
//
// Importers: cmd/gpubridge/app and cmd/gpubridge.
package view
