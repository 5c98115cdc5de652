package app

import (
	"fmt"
	"net"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/gpubridge/gpubridge/internal/dbsetup"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// InitDBScript is the SQL that prepares MariaDB for gpubridge (gpubridge
// init-db), with the names and passwords of database.dsn and slurmdb.dsn:
// gpubridge's database and user, and the read-only user of slurmdbd's
// database. The accounts are 'USER'@'HOST' for each of hosts; none means
// localhost and 127.0.0.1 when both DSNs name this host, and is refused
// otherwise.
func (e *Env) InitDBScript(hosts []string) (SQLScript, error) {
	c, err := e.Config()
	if err != nil {
		return "", err
	}
	if err := c.RequireDatabase(); err != nil {
		return "", Input(err)
	}
	if c.SlurmDB.DSN == "" {
		return "", Inputf("slurmdb.dsn: slurmdbd's database is not configured; set it (or GPUBRIDGE_SLURMDB_DSN) to the read-only user's DSN for slurm_acct_db")
	}
	store, err := mysql.ParseDSN(sqldb.SplitDSN(c.Database.DSN)[0]) // one node of a list: init-db grants on the cluster
	if err != nil {
		return "", Inputf("database.dsn: %v", err)
	}
	ro, err := mysql.ParseDSN(c.SlurmDB.DSN)
	if err != nil {
		return "", Inputf("slurmdb.dsn: %v", err)
	}
	if len(hosts) == 0 {
		if !localDSN(store) || !localDSN(ro) {
			return "", Inputf("--client-host: the database is on another host (%s); say where gpubridge connects from, e.g. --client-host %s", store.Addr, "gpubridge-host.example.org")
		}
		hosts = []string{"localhost", "127.0.0.1"}
	}
	p := dbsetup.Params{
		Database: store.DBName, User: store.User, Password: store.Passwd,
		SlurmDatabase: ro.DBName, ReadOnlyUser: ro.User, ReadOnlyPassword: ro.Passwd,
		Hosts: hosts,
	}
	if err := p.Check(false); err != nil {
		return "", Input(err)
	}
	header := fmt.Sprintf("gpubridge init-db: MariaDB setup for user %s, database %s (database.dsn)\nand user %s, database %s (slurmdb.dsn), accounts at %s.\nRun as MariaDB's root: gpubridge init-db | sudo mariadb\nThen create gpubridge's schema: gpubridge migrate",
		store.User, store.DBName, ro.User, ro.DBName, strings.Join(hosts, ", "))
	return SQLScript(dbsetup.Script(header, p.Statements())), nil
}

// SQLScript is SQL for MariaDB's root to run (init-db).
type SQLScript string

// Text is the script as init-db prints it.
func (s SQLScript) Text() string { return string(s) }

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
