package dbsetup

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Params names what the setup makes. Hosts are the MariaDB host parts of
// the accounts ('gpubridge'@'HOST'): where gpubridge connects from.
type Params struct {
	Database string // gpubridge's database, e.g. gpubridge
	User     string // its user, e.g. gpubridge
	Password string
	// SlurmDatabase is slurmdbd's database (StorageLoc, default
	// slurm_acct_db); ReadOnlyUser may only SELECT from it.
	SlurmDatabase    string
	ReadOnlyUser     string
	ReadOnlyPassword string
	Hosts            []string
}

// Statement is one SQL statement and the comment printed above it.
type Statement struct {
	Comment string
	SQL     string
}

// Placeholder passwords are what contrib/sql/setup.sql carries; Check
// refuses them (and the example configuration's CHANGE-ME) for real use.
const (
	PlaceholderPassword         = "CHANGE-ME-STORE"
	PlaceholderReadOnlyPassword = "CHANGE-ME-READONLY"
)

var (
	nameRe = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)
	userRe = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,80}$`)
	hostRe = regexp.MustCompile(`^[A-Za-z0-9_.:%-]{1,255}$`)
)

// ErrInvalid is wrapped by every Check error.
var ErrInvalid = errors.New("invalid database setup")

// Check reports every problem of p at once, naming the field. Placeholder
// passwords are refused unless placeholders is true (the SQL file).
func (p Params) Check(placeholders bool) error {
	var probs []string
	add := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	if !nameRe.MatchString(p.Database) {
		add("database.dsn: database name %q: want 1-64 letters, digits or _", p.Database)
	}
	if !nameRe.MatchString(p.SlurmDatabase) {
		add("slurmdb.dsn: database name %q: want 1-64 letters, digits or _", p.SlurmDatabase)
	}
	if p.Database == p.SlurmDatabase && p.Database != "" {
		add("database.dsn and slurmdb.dsn name the same database %q: gpubridge's store must not live in slurmdbd's database", p.Database)
	}
	if !userRe.MatchString(p.User) {
		add("database.dsn: user %q: want 1-80 letters, digits, _ . or -", p.User)
	}
	if !userRe.MatchString(p.ReadOnlyUser) {
		add("slurmdb.dsn: user %q: want 1-80 letters, digits, _ . or -", p.ReadOnlyUser)
	}
	if p.User == p.ReadOnlyUser && p.User != "" {
		add("slurmdb.dsn: user %q is database.dsn's user too: slurm_acct_db must be read through a user of its own that may only SELECT", p.User)
	}
	for field, pw := range map[string]string{"database.dsn": p.Password, "slurmdb.dsn": p.ReadOnlyPassword} {
		switch {
		case pw == "":
			add("%s: no password: set one in the DSN (user:PASSWORD@tcp(...)/db)", field)
		case strings.ContainsAny(pw, "'\\\n\r\x00"):
			add("%s: the password contains a quote, backslash, newline or NUL; choose another", field)
		case !placeholders && (pw == "CHANGE-ME" || pw == PlaceholderPassword || pw == PlaceholderReadOnlyPassword):
			add("%s: the password is still the example's %q; set a password of your own", field, pw)
		}
	}
	if len(p.Hosts) == 0 {
		add("hosts: no client host: say where gpubridge connects from (--client-host)")
	}
	for _, h := range p.Hosts {
		if !hostRe.MatchString(h) {
			add("hosts: %q is not a host name, address or pattern", h)
		}
	}
	if len(probs) > 0 {
		return fmt.Errorf("%w:\n  %s", ErrInvalid, strings.Join(probs, "\n  "))
	}
	return nil
}

// Statements returns the setup, in order. Every statement can run again:
// users and the database are created when missing, passwords set to the
// given ones, grants added (never revoked).
func (p Params) Statements() []Statement {
	var out []Statement
	add := func(comment, format string, a ...any) {
		out = append(out, Statement{Comment: comment, SQL: fmt.Sprintf(format, a...)})
	}
	add("gpubridge's own database: tenants, bookings, rate cards, the ledger and the audit log (schema: gpubridge migrates it).",
		"CREATE DATABASE IF NOT EXISTS %s CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", ident(p.Database))
	for i, h := range p.Hosts {
		c := ""
		if i == 0 {
			c = fmt.Sprintf("Its user: all rights on %s only (the migrations create and alter its tables).", p.Database)
		}
		add(c, "CREATE USER IF NOT EXISTS %s IDENTIFIED BY %s", account(p.User, h), quote(p.Password))
		add("", "ALTER USER %s IDENTIFIED BY %s", account(p.User, h), quote(p.Password))
		add("", "GRANT ALL PRIVILEGES ON %s.* TO %s", ident(p.Database), account(p.User, h))
	}
	for i, h := range p.Hosts {
		c := ""
		if i == 0 {
			c = fmt.Sprintf("The read-only user for slurmdbd's database %s: ingest reads job records and never writes.", p.SlurmDatabase)
		}
		add(c, "CREATE USER IF NOT EXISTS %s IDENTIFIED BY %s", account(p.ReadOnlyUser, h), quote(p.ReadOnlyPassword))
		add("", "ALTER USER %s IDENTIFIED BY %s", account(p.ReadOnlyUser, h), quote(p.ReadOnlyPassword))
		add("", "GRANT SELECT ON %s.* TO %s", ident(p.SlurmDatabase), account(p.ReadOnlyUser, h))
	}
	return out
}

// Script renders statements as a file for the mariadb client.
func Script(header string, st []Statement) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
		b.WriteString(strings.TrimRight("-- "+l, " ") + "\n")
	}
	for _, s := range st {
		if s.Comment != "" {
			b.WriteString("\n-- " + s.Comment + "\n")
		}
		b.WriteString(s.SQL + ";\n")
	}
	return b.String()
}

// Redacted is s with the passwords of p replaced by '********' (for logs).
func (p Params) Redacted(s string) string {
	for _, pw := range []string{p.Password, p.ReadOnlyPassword} {
		if pw != "" {
			s = strings.ReplaceAll(s, quote(pw), "'********'")
		}
	}
	return s
}

func ident(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func account(user, host string) string { return quote(user) + "@" + quote(host) }
