// Package setup builds the booking use cases (bridge/reserve) of a
// configuration: reserve.Settings from bookings.*, the tenants' booking
// policies over the tenant store, the booking store on gpubridge's
// database for the cluster, the slurmrestd adapter, the projector, and the
// daemon's projection job with its metrics. The CLI's booking commands,
// the daemon and the tenant API call it, so all run the same service.
//
// It is an edge package: it imports the adapters (store, slurmadapter,
// tenantstore, metrics) and the configuration.
//
// Importers: cmd/gpubridge/app (the CLI and the daemon), cmd/gpubridge/api/setup.
package bookingsetup
