package main

import (
	"github.com/spf13/cobra"
)

// registerAccounting adds the metering and chargeback commands (ingest,
// show usage, close, export chargeback, rate card commands). The daemon's
// ingest and period close are wired in jobs.go.
func registerAccounting(a *App, root *cobra.Command) {
	verbs := map[string]*cobra.Command{}
	for _, c := range root.Commands() {
		verbs[c.Name()] = c
	}
	need := func(name, short string) *cobra.Command {
		if v, ok := verbs[name]; ok {
			return v
		}
		v := verb(name, short)
		root.AddCommand(v)
		verbs[name] = v
		return v
	}
	root.AddCommand(ingestCmd(a), closeCmd(a), chargeCmd(a))
	need("export", "Export entities (chargeback)").AddCommand(exportChargebackCmd(a))
	need("show", "Display entities").AddCommand(showUsageCmd(a), showRatesCmd(a), showRateCardCmd(a), showIngestCmd(a))
	need("add", "Add entities").AddCommand(addRateCmd(a), addGPUTypeCmd(a))
	need("delete", "Delete entities").AddCommand(deleteRateCmd(a))
	need("load", "Load entities from a file").AddCommand(loadRateCardCmd(a))
}
