package main

import (
	"fmt"
	"net"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/internal/dbsetup"
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
			c, err := a.Config()
			if err != nil {
				return err
			}
			if err := c.RequireDatabase(); err != nil {
				return usageError{err}
			}
			if c.SlurmDB.DSN == "" {
				return usagef("slurmdb.dsn: slurmdbd's database is not configured; set it (or GPUBRIDGE_SLURMDB_DSN) to the read-only user's DSN for slurm_acct_db")
			}
			store, err := mysql.ParseDSN(c.Database.DSN)
			if err != nil {
				return usagef("database.dsn: %v", err)
			}
			ro, err := mysql.ParseDSN(c.SlurmDB.DSN)
			if err != nil {
				return usagef("slurmdb.dsn: %v", err)
			}
			if len(hosts) == 0 {
				if !localDSN(store) || !localDSN(ro) {
					return usagef("--client-host: the database is on another host (%s); say where gpubridge connects from, e.g. --client-host %s", store.Addr, "gpubridge-host.example.org")
				}
				hosts = []string{"localhost", "127.0.0.1"}
			}
			p := dbsetup.Params{
				Database: store.DBName, User: store.User, Password: store.Passwd,
				SlurmDatabase: ro.DBName, ReadOnlyUser: ro.User, ReadOnlyPassword: ro.Passwd,
				Hosts: hosts,
			}
			if err := p.Check(false); err != nil {
				return usageError{err}
			}
			header := fmt.Sprintf("gpubridge init-db: MariaDB setup for user %s, database %s (database.dsn)\nand user %s, database %s (slurmdb.dsn), accounts at %s.\nRun as MariaDB's root: gpubridge init-db | sudo mariadb\nThen create gpubridge's schema: gpubridge migrate",
				store.User, store.DBName, ro.User, ro.DBName, strings.Join(hosts, ", "))
			_, err = fmt.Fprint(a.out, dbsetup.Script(header, p.Statements()))
			return err
		},
	}
	cmd.Flags().StringSliceVar(&hosts, "client-host", nil, "host part of the MariaDB accounts: where gpubridge connects from (repeatable)")
	return cmd
}

// localDSN reports whether a DSN reaches MariaDB on this host (a unix
// socket or a loopback address).
func localDSN(c *mysql.Config) bool {
	if c.Net == "unix" {
		return true
	}
	host := c.Addr
	if h, _, err := net.SplitHostPort(c.Addr); err == nil {
		host = h
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
