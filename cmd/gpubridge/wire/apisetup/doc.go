// Package setup wires the tenant API (cmd/gpubridge/api) of a configuration for
// `serve`: its ports on the stores and use cases the CLI uses (the tenant
// store, the burst service, the booking service, the billing books, the
// token store, the ledger's ingest watermark), each built at its first use
// on the daemon's lazily connected, reloadable clients (clients.Lazy), so
// that nothing connects before a request or the snapshot loop needs it.
//
// It is an edge package: it imports the adapters and services it wires.
//
// Importers: cmd/gpubridge/app.
package apisetup
