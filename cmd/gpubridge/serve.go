package main

import (
	"github.com/spf13/cobra"
)

func serveCmd(a *App) *cobra.Command {
	var listen string
	var initDB bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the daemon: periodic reconcile, burst, ingest, period close and booking projection; the tenant API, status page, /metrics, /healthz, /readyz",
		Long: `serve runs gpubridge's periodic jobs on their cron schedules (config: schedules.*)
while this replica holds the cluster's MariaDB leader lock, so only one
replica per cluster writes. Every replica serves, on server.listen, the
tenant API (/api/v1/, see docs/api.md) and status page (/), /healthz
(liveness) and /readyz (readiness: 503 while slurmrestd or a database it
needs does not answer); and /metrics on server.metricsListen only (default
127.0.0.1:9181: the metrics name every tenant).

It starts and stays up while slurmrestd or MariaDB is down: every job
connects on its first run and retries. It never creates gpubridge's schema
in an empty database unless --init (or database.init: true) says so; it
refuses, logs it and exports gpubridge_database_schema_refused instead.

SIGHUP reloads the configuration: a new one that is invalid, or names a file
that cannot be read or an address that cannot be bound, is refused and the
running one kept; otherwise the clients whose settings changed (slurmrestd
URL, JWT key, token or token file, DSNs) are rebuilt and the old pools closed,
and the server rebinds if its settings changed. SIGINT/SIGTERM stop it
gracefully within server.shutdownTimeout. See docs/daemon.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.Serve(cmd.Context(), listen, initDB)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "HTTP listen address (overrides server.listen)")
	cmd.Flags().BoolVar(&initDB, "init", false, "create gpubridge's schema if the database is empty (once, for a new installation)")
	return cmd
}
