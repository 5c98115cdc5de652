package clients

import (
	"context"
	"crypto/sha256"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/internal/sacctmgr"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// Names of the clients, as logs, metrics and readiness checks call them.
const (
	NameSlurmRest = "slurmrestd"
	NameDatabase  = "database"
	NameSlurmDB   = "slurmdb"
)

// ErrClosed is returned by a client of a Set that was closed (replaced by
// a reload, or at shutdown).
var ErrClosed = errors.New("client closed")

// Options say how a Set builds its clients. The zero value builds real
// clients and refuses to create a schema in an empty database.
type Options struct {
	Logger *slog.Logger
	// DB is what may be done to an empty gpubridge database; the
	// configuration's database.init also allows creating the schema.
	DB sqldb.Policy

	// Test seams; nil uses the real constructors.
	ConnectDB func(dsn string) (driver.Connector, error)
	PrepareDB func(ctx context.Context, db *sqlx.DB, p sqldb.Policy) (sqldb.Schema, error)
	OpenSlurm func(o slurmrest.Options) (*slurmrest.Client, error)
}

// Set holds the clients of one configuration, made with it: none
// connects before its first use (the slurmrestd client negotiates at its
// first request, a pool connects at its first statement), so services and
// jobs are built on them eagerly. It is safe for concurrent use.
type Set struct {
	cfg     config.Config
	opts    Options
	log     *slog.Logger
	slurm   *slurmConn
	db      *pool
	slurmdb *pool
	// cluster is the handle of the Set's cluster (its name, resolved once
	// per Set, and the sacctmgr runner made with it).
	cluster *Cluster
}

// New returns the Set of c; it connects nothing.
func New(c config.Config, o Options) *Set {
	s := &Set{cfg: c, opts: o, log: o.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.opts.ConnectDB == nil {
		s.opts.ConnectDB = sqldb.Connector
	}
	if s.opts.PrepareDB == nil {
		s.opts.PrepareDB = sqldb.Prepare
	}
	if s.opts.OpenSlurm == nil {
		s.opts.OpenSlurm = slurmrest.Open
	}
	fp, _ := fingerprints(c, o)
	s.slurm = s.newSlurm(fp[NameSlurmRest])
	s.db = s.newDB(fp[NameDatabase])
	s.slurmdb = s.newSlurmDB(fp[NameSlurmDB])
	s.cluster = newCluster(s, c)
	return s
}

// Config is the configuration the Set was made for.
func (s *Set) Config() config.Config { return s.cfg }

// Slurm returns the slurmrestd client, made with the Set: it connects to
// nothing until its first request, which negotiates the API version (and
// again after a failed negotiation). The error is the configuration's when
// it cannot make a client, ErrClosed after Close.
func (s *Set) Slurm(context.Context) (*slurmrest.Client, error) { return s.slurm.get(s.log) }

// BuiltSlurm returns the slurmrestd client if a use negotiated with
// slurmrestd, nil otherwise; it never connects (request counters read it).
func (s *Set) BuiltSlurm() *slurmrest.Client {
	if !s.slurm.isBuilt() {
		return nil
	}
	return s.slurm.cl
}

// DB returns the pool of gpubridge's own database, made with the Set: it
// connects at its first statement, which first checks (and, as the Set's
// policy allows, creates or migrates) the schema. The error is the
// configuration's when it names no usable database, ErrClosed after Close.
func (s *Set) DB(context.Context) (*sqlx.DB, error) { return s.db.get() }

// SlurmDB returns the pool of slurmdbd's database (read-only user), made
// with the Set; it connects at its first statement.
func (s *Set) SlurmDB(context.Context) (*sqlx.DB, error) { return s.slurmdb.get() }

// Cluster is the handle of the Set's cluster: its name is resolved once
// per Set, that is once per configuration generation.
func (s *Set) Cluster() *Cluster { return s.cluster }

// Sacctmgr returns the runner of reconcile.sacctmgr once the cluster's
// name is known, nil when it is unset or the name is not resolved yet; it
// never connects. Its command counter counts for every use of the Set.
func (s *Set) Sacctmgr() *sacctmgr.Runner { return s.cluster.builtSacctmgr() }

// Built lists the clients that reached their server so far (the
// slurmrestd client negotiated, a pool connected), by name.
func (s *Set) Built() []string {
	var out []string
	for name, built := range map[string]bool{NameSlurmRest: s.slurm.isBuilt(), NameDatabase: s.db.isBuilt(), NameSlurmDB: s.slurmdb.isBuilt()} {
		if built {
			out = append(out, name)
		}
	}
	return out
}

// Close closes every client of the Set; later uses fail with ErrClosed.
func (s *Set) Close() {
	s.slurm.shutdown()
	s.db.shutdown()
	s.slurmdb.shutdown()
}

// Derive returns the Set for the reloaded configuration c: it shares the
// clients of s whose settings are unchanged and makes new, unbuilt ones
// for the others, whose names it returns. It reads the JWT key and token
// files to compare them; a file that cannot be read is an error, and the
// caller keeps s. s stays usable until the caller calls CloseReplaced.
func (s *Set) Derive(c config.Config) (*Set, []string, error) {
	fp, err := fingerprints(c, s.opts)
	if err != nil {
		return nil, nil, err
	}
	n := &Set{cfg: c, opts: s.opts, log: s.log}
	n.cluster = newCluster(n, c)
	var changed []string
	n.slurm, n.db, n.slurmdb = s.slurm, s.db, s.slurmdb
	if s.slurm.fp != fp[NameSlurmRest] {
		n.slurm, changed = n.newSlurm(fp[NameSlurmRest]), append(changed, NameSlurmRest)
	}
	if s.db.fp != fp[NameDatabase] {
		n.db, changed = n.newDB(fp[NameDatabase]), append(changed, NameDatabase)
	}
	if s.slurmdb.fp != fp[NameSlurmDB] {
		n.slurmdb, changed = n.newSlurmDB(fp[NameSlurmDB]), append(changed, NameSlurmDB)
	}
	return n, changed, nil
}

// CloseReplaced closes the clients of s that next does not share (the
// pools a reload replaced).
func (s *Set) CloseReplaced(next *Set) {
	if s.slurm != next.slurm {
		s.slurm.shutdown()
	}
	if s.db != next.db {
		s.db.shutdown()
	}
	if s.slurmdb != next.slurmdb {
		s.slurmdb.shutdown()
	}
}

// newSlurm makes the slurmrestd client of the Set's configuration; it
// connects to nothing. A configuration that cannot make one (no
// credential, an unreadable token file) is the error of every use.
func (s *Set) newSlurm(fp string) *slurmConn {
	c := s.cfg
	conn := &slurmConn{fp: fp}
	if conn.err = c.RequireSlurmRest(); conn.err != nil {
		return conn
	}
	sc := c.SlurmRest
	token := sc.Token
	if sc.TokenFile != "" {
		b, readable, err := readSecret(sc.TokenFile)
		if err != nil {
			conn.err = fmt.Errorf("slurmrest.tokenFile: %w", err)
			return conn
		}
		token = b
		if readable {
			conn.warnings = append(conn.warnings, warning{"the slurmrestd token file is readable by every user; it is a Slurm credential (chmod o-r)", "file", sc.TokenFile})
		}
	}
	if w := PlainJWTWarning(sc.URL); w != "" {
		conn.warnings = append(conn.warnings, warning{w, "url", sc.URL})
	}
	conn.tr = http.DefaultTransport.(*http.Transport).Clone()
	conn.cl, conn.err = s.opts.OpenSlurm(slurmrest.Options{
		URL:          sc.URL,
		APIVersion:   sc.APIVersion,
		JWTKeyFile:   sc.JWTKeyFile,
		Token:        token,
		User:         sc.User,
		Cluster:      c.Cluster,
		Timeout:      sc.Timeout.Duration,
		MaxBodyBytes: sc.MaxBodyBytes,
		Logger:       s.log,
		HTTPClient:   &http.Client{Transport: conn.tr},
	})
	return conn
}

// newDB makes the pool of gpubridge's database; its first connection
// prepares the schema by the Set's policy (and database.init).
func (s *Set) newDB(fp string) *pool {
	c := s.cfg
	policy := s.opts.DB
	policy.InitEmpty = policy.InitEmpty || c.Database.Init
	what := "database " + sqldb.Redact(c.Database.DSN)
	return newPool(fp, what, c.Database.DSN, c.RequireDatabase(), s.opts.ConnectDB, func(ctx context.Context, db *sqlx.DB) error {
		sch, err := s.opts.PrepareDB(ctx, db, policy)
		if err != nil {
			return err
		}
		switch {
		case sch.Kind == sqldb.Empty:
			s.log.Warn("created gpubridge's schema in an empty database", "database", sch.Database, "dsn", sqldb.Redact(c.Database.DSN))
		case sch.Pending > 0:
			s.log.Info("applied pending migrations", "database", sch.Database, "migrations", sch.Pending)
		}
		return nil
	})
}

// newSlurmDB makes the pool of slurmdbd's database.
func (s *Set) newSlurmDB(fp string) *pool {
	c := s.cfg
	return newPool(fp, "database "+sqldb.Redact(c.SlurmDB.DSN), c.SlurmDB.DSN, c.RequireSlurmDB(), s.opts.ConnectDB, nil)
}

// fingerprints hashes each client's settings, file contents included. The
// error names the first configured file that cannot be read or a DSN that
// does not parse; the map is complete either way.
func fingerprints(c config.Config, o Options) (map[string]string, error) {
	var errs []error
	file := func(field, path string) string {
		if path == "" {
			return ""
		}
		b, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, err))
			return "unreadable"
		}
		if len(strings.TrimSpace(string(b))) == 0 {
			errs = append(errs, fmt.Errorf("%s: %s is empty", field, path))
		}
		return hash(string(b))
	}
	dsn := func(field, d string) string {
		if d != "" {
			if _, err := mysql.ParseDSN(d); err != nil {
				errs = append(errs, fmt.Errorf("%s: %s: %w", field, sqldb.Redact(d), err))
			}
		}
		return hash(d)
	}
	sc := c.SlurmRest
	fp := map[string]string{
		NameSlurmRest: hash(sc.URL, sc.APIVersion, sc.User, c.Cluster, sc.Timeout.String(), fmt.Sprint(sc.MaxBodyBytes),
			sc.JWTKeyFile, file("slurmrest.jwtKeyFile", sc.JWTKeyFile), hash(sc.Token),
			sc.TokenFile, file("slurmrest.tokenFile", sc.TokenFile)),
		NameDatabase: hash(dsn("database.dsn", c.Database.DSN), fmt.Sprint(o.DB.InitEmpty || c.Database.Init)),
		NameSlurmDB:  dsn("slurmdb.dsn", c.SlurmDB.DSN),
	}
	return fp, errors.Join(errs...)
}

func hash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// readSecret reads a token file; readable says anyone may read it.
func readSecret(path string) (tok string, readable bool, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false, err
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o004 != 0 {
		readable = true
	}
	tok = strings.TrimSpace(string(b))
	if tok == "" {
		return "", false, fmt.Errorf("%s is empty", path)
	}
	return tok, readable, nil
}

// PlainJWTWarning returns a warning when a JWT would travel over plain
// http to a host that is not loopback, else "".
func PlainJWTWarning(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" || IsLoopback(u.Hostname()) {
		return ""
	}
	return "slurmrestd is reached over plain http on a non-loopback host: its JWT (a Slurm credential) travels unencrypted; use https or a loopback address"
}

// IsLoopback reports whether host (a name or an IP, no port) is loopback.
// Names other than "localhost" are not resolved and count as not loopback.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
