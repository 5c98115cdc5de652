// Package wire builds each feature of a configuration from the
// configuration and the cluster handle (cmd/gpubridge/clients.Cluster),
// one function per feature, so that the CLI's commands, the daemon's jobs
// and the tenant API run the same services:
//   - API: the tenant API (cmd/gpubridge/api) for `serve`, its ports on
//     the stores and use cases the CLI uses, built as plain values on
//     the cluster's clients (none connects before a request or the
//     snapshot loop);
//   - OpenBookings and NewBookings: the booking use cases (bridge/reserve):
//     reserve.Settings from bookings.* (BookingSettings), the tenants'
//     booking policies over the tenant store, the booking store for the
//     cluster, the slurmrestd adapter, the projector and the daemon's
//     projection job (BookingJob);
//   - Burst: the burst controller (bridge/burst) over slurmjobs, the
//     tenant store or a tenants file, spend over the ledger and the stored
//     or a given rate card, and the burst tables (BurstService: Run,
//     Cycle, Plan, Overview);
//   - Health: the health service (bridge/health): the managed nodes and
//     check catalog (HealthCheck, HealthCatalog), the settings
//     (HealthSettings), on the slurmrestd adapter and the store;
//   - Ingester and IngestSource: the ingest (accounting/ingest) from
//     slurm_acct_db or slurmrestd;
//   - CreditJob: the node health credit job (bridge/health/credit).
//
// It is the assembly layer of the roof: it imports the features, their
// adapters and the configuration; no feature imports it.
package wire
