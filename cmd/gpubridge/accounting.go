package main

import "github.com/spf13/cobra"

// registerAccounting adds the metering and chargeback commands (ingest,
// show usage, close, export chargeback, rate card commands). The daemon's
// ingest and period close are wired in cmd/gpubridge/app/daemon.go.
func registerAccounting(a *App, root *cobra.Command) {
	root.AddCommand(ingestCmd(a), closeCmd(a), chargeCmd(a))
	subcommand(root, "export", "Export entities (chargeback)").AddCommand(exportChargebackCmd(a))
	subcommand(root, "show", "Display entities").AddCommand(showUsageCmd(a), showRatesCmd(a), showRateCardCmd(a), showIngestCmd(a))
	subcommand(root, "add", "Add entities").AddCommand(addRateCmd(a), addGPUTypeCmd(a))
	subcommand(root, "delete", "Delete entities").AddCommand(deleteRateCmd(a))
	subcommand(root, "load", "Load entities from a file").AddCommand(loadRateCardCmd(a))
}
