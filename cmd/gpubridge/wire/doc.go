// Package wire builds each feature of a configuration from the
// configuration and the cluster handle (cmd/gpubridge/clients.Cluster):
// one function per feature, shared by the CLI's commands and the daemon's
// jobs. Here so far: the tenant API (API), the ingest (Ingester,
// IngestSource) and the node health credit job (CreditJob); bookings,
// burst and health are still wired in the subpackages bookingsetup,
// burstsetup and healthsetup.
package wire
