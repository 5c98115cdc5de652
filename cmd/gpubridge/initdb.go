package main

import (
	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
)

func registerInitDB(a *App, root *cobra.Command) { root.AddCommand(initDBCmd(a)) }

func initDBCmd(a *App) *cobra.Command {
	var hosts []string
	cmd := &cobra.Command{
		Use:   "init-db [--client-host HOST ...]",
		Short: "Print the SQL that makes gpubridge's database, its user and the read-only slurm_acct_db user",
		Long: `Print, for MariaDB's root to run, the SQL that prepares MariaDB for gpubridge, with the names
and passwords of database.dsn and slurmdb.dsn:

  - gpubridge's database (database.dsn's database) and its user, with all rights on it only;
  - a read-only user for slurmdbd's database (slurmdb.dsn's user and database): SELECT only.

It runs nothing itself: pipe it to the mariadb client on the database host, e.g.

  gpubridge init-db | sudo mariadb

Every statement can run again (users and the database are made when missing, passwords set to
the configured ones, grants added, nothing dropped or revoked). The tables are made by
` + "`gpubridge migrate`" + ` afterwards, not here. The accounts are 'USER'@'HOST' for each --client-host (where gpubridge
connects from); by default localhost and 127.0.0.1 when the DSNs name this host, else the flag
is required. contrib/sql/setup.sql is the same SQL with placeholder passwords.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return tells(a, app.SQLScript.Text)(a.InitDBScript(hosts))
		},
	}
	cmd.Flags().StringSliceVar(&hosts, "client-host", nil, "host part of the MariaDB accounts: where gpubridge connects from (repeatable)")
	return cmd
}
