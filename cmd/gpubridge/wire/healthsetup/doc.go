// Package setup builds the health service (bridge/health) of a
// configuration: the managed nodes from health.nodes' hostlists, the
// check catalog from health.checks, the settings and schedules, on the
// slurmrestd adapter and the MariaDB store. The CLI's health commands and
// the daemon call it, so both run the same service.
//
// Importers: cmd/gpubridge/app.
package healthsetup
