package main

import (
	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
)

func migrateCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Create gpubridge's schema in an empty database, or apply pending migrations",
		Long: `migrate checks gpubridge's database (database.dsn) and brings its schema up to
this version: in an empty database it creates the schema, in a gpubridge
database it applies the migrations not applied yet, and a database holding
tables that are not gpubridge's is refused. It prints what it found and did.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return tells(a, app.Migrated.Text)(a.Migrate(cmd.Context()))
		},
	}
}
