package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/internal/sqldb"
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
			s, err := a.Migrate(cmd.Context())
			if err != nil {
				return err
			}
			total := s.Applied + s.Pending
			switch {
			case s.Kind == sqldb.Empty:
				_, err = fmt.Fprintf(a.out, "database %s: was empty; created gpubridge's schema (%d migrations)\n", s.Database, total)
			case s.Pending > 0:
				_, err = fmt.Fprintf(a.out, "database %s: applied %d pending migrations (%d in all)\n", s.Database, s.Pending, total)
			default:
				_, err = fmt.Fprintf(a.out, "database %s: schema is current (%d migrations)\n", s.Database, total)
			}
			return err
		},
	}
}
