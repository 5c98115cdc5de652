// Package billing is the accounting's application layer: the use cases
// that the CLI (cmd/gpubridge), the daemon's jobs (accounting/jobs) and the
// coming tenant API share, so none of them holds a rule of its own.
//
//   - [Books.View]: what reports of one billing period read. A closed
//     period is shown with the rate card and tenant labels stored when it
//     was closed (its export is the same bytes forever); an open one with
//     the current card and labels, its accruals included.
//   - [Books.Export]: one period's chargeback to a file or a writer; a
//     FOCUS file gets its metadata beside it (or at the path asked for).
//   - [Closer.Close]: closing a period, the same steps for `gpubridge
//     close` and the daemon's close job (checks, optional re-read, card
//     and labels, ledger.Close).
//   - [IngestSetup.Ingester]: the ingester for a source (the slurm_acct_db
//     database or slurmrestd) built from the configuration.
//   - [TenantLabels]: the account → tenant labels from the tenant store.
//   - [BookingCharger.Charge]: the bookings' charges into the ledger, for
//     `gpubridge charge bookings`, the daemon's booking-charges job and a
//     close (Closer.Charger), from a [BookingSource] cmd/ adapts the
//     booking store to.
//
// It depends on the ledger, ingest, export, pricing and ratecard packages
// and on small interfaces of its own for the stores; it opens nothing
// itself (connections come in as functions).
package billing
