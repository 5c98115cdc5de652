package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/internal/app"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
)

// registerAccounting adds the metering and chargeback commands (ingest,
// show usage, close, export chargeback, rate card commands). The daemon's
// ingest and period close are wired in internal/app/daemon.go.
func registerAccounting(a *App, root *cobra.Command) {
	root.AddCommand(ingestCmd(a), closeCmd(a), chargeCmd(a))
	subcommand(root, "export", "Export entities (chargeback)").AddCommand(exportChargebackCmd(a))
	subcommand(root, "show", "Display entities").AddCommand(showUsageCmd(a), showRatesCmd(a), showRateCardCmd(a), showIngestCmd(a))
	subcommand(root, "add", "Add entities").AddCommand(addRateCmd(a), addGPUTypeCmd(a))
	subcommand(root, "delete", "Delete entities").AddCommand(deleteRateCmd(a))
	subcommand(root, "load", "Load entities from a file").AddCommand(loadRateCardCmd(a))
}

// printViews prints a view's tables, a blank line between two, and its
// note about the choice of tables on stderr.
func (a *App) printViews(ts []table.Table, note string) error {
	if note != "" {
		fmt.Fprintln(a.err, note)
	}
	for i, t := range ts {
		if i > 0 {
			fmt.Fprintln(a.out)
		}
		if err := a.Print(t); err != nil {
			return err
		}
	}
	return nil
}

// keyArgs parses the key=value arguments of a command that takes keys; a
// mistake in them is a usage error.
func keyArgs(args []string, keys ...string) (kv.Args, error) {
	ka, err := kv.Parse(args, kv.Spec{Keys: keys})
	if err != nil {
		return ka, app.Input(err)
	}
	return ka, nil
}
