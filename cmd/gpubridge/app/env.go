package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// Env is what a use case runs with: the configuration, the logger and the
// clients (made at the first need, connecting at their first use). A command has one Env for its process;
// the daemon binds a copy to each configuration it loads (WithClients).
type Env struct {
	ConfigPath string    // --config; "" is $GPUBRIDGE_CONFIG, else config.DefaultPath (optional)
	Verbose    bool      // log at debug level
	Daemon     bool      // serve: log at info (commands: warnings only)
	Stderr     io.Writer // where the log goes
	// ClusterFlag is -M/--cluster: which of the configuration's clusters the
	// process serves (config.Config.Views); "" is the only one.
	ClusterFlag string

	cfg      *config.Config
	logger   *slog.Logger
	conns    *clients.Set // nil until the first client is asked for
	registry *prometheus.Registry
}

// Config loads and validates the configuration once. The default path is
// optional (the environment may carry everything); an explicit one is not.
func (e *Env) Config() (config.Config, error) {
	if e.cfg != nil {
		return *e.cfg, nil
	}
	c, err := e.LoadConfig()
	if err != nil {
		return c, err
	}
	e.cfg = &c
	return c, nil
}

// LoadConfig reads and validates the configuration afresh (serve reads it
// again at every SIGHUP).
func (e *Env) LoadConfig() (config.Config, error) {
	path, optional := e.ConfigPath, false
	if path == "" {
		if p, ok := os.LookupEnv("GPUBRIDGE_CONFIG"); ok && p != "" {
			path = p
		} else {
			path, optional = config.DefaultPath, true
		}
	}
	c, err := config.Read(path, optional, os.LookupEnv)
	if err != nil {
		return c, err
	}
	return Pick(c, e.ClusterFlag)
}

// Pick is the view of the cluster named cluster (-M): the only one when
// cluster is empty; for a configuration without clusters: the
// configuration itself, named cluster when it names none (slurmrestd
// then checks the name), refused when it names another.
func Pick(c config.Config, cluster string) (config.Config, error) {
	names := c.ClusterNames()
	if !c.Several() {
		switch {
		case cluster == "" || cluster == c.Cluster:
		case c.Cluster == "":
			c.Cluster = cluster
		default:
			return c, fmt.Errorf("-M %s: this configuration serves cluster %s (cluster: or GPUBRIDGE_CLUSTER); list the clusters under clusters: to serve several", cluster, c.Cluster)
		}
		return c, nil
	}
	if cluster == "" {
		if len(names) == 1 {
			return c.Views()[0], nil
		}
		return c, fmt.Errorf("the configuration lists %d clusters (%s): name the one to use with -M CLUSTER", len(names), strings.Join(names, ", "))
	}
	if v, ok := c.View(cluster); ok {
		return v, nil
	}
	return c, fmt.Errorf("-M %s: not a cluster of the configuration (clusters: lists %s)", cluster, strings.Join(names, ", "))
}

// Logger is the one logger, on Stderr: a command prints what it did, so
// its log shows warnings only; Verbose shows everything (debug), and the
// daemon logs at info.
func (e *Env) Logger() *slog.Logger {
	if e.logger == nil {
		lvl := slog.LevelWarn
		switch {
		case e.Verbose:
			lvl = slog.LevelDebug
		case e.Daemon:
			lvl = slog.LevelInfo
		}
		w := e.Stderr
		if w == nil {
			w = os.Stderr
		}
		e.logger = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lvl}))
	}
	return e.logger
}

// Registry is the process's Prometheus registry; features register their
// collectors on it.
func (e *Env) Registry() *prometheus.Registry {
	if e.registry == nil {
		e.registry = prometheus.NewRegistry()
		e.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return e.registry
}

// Clients returns the process's clients, made for the configuration at
// the first call (they connect at their first use). A command's may
// create gpubridge's schema in an empty database (see DB).
func (e *Env) Clients() (*clients.Set, error) {
	if e.conns != nil {
		return e.conns, nil
	}
	c, err := e.Config()
	if err != nil {
		return nil, err
	}
	e.conns = clients.New(c, clients.Options{Logger: e.Logger(), DB: sqldb.Policy{InitEmpty: true}})
	return e.conns, nil
}

// Close closes the pools the process opened (the CLI does at the end of
// every command).
func (e *Env) Close() {
	if e.conns != nil {
		e.conns.Close()
	}
}

// Slurm is the slurmrestd client, made once per process, or once per
// configuration in the daemon; it negotiates the API version at its first
// request.
func (e *Env) Slurm(ctx context.Context) (*slurmrest.Client, error) {
	set, err := e.Clients()
	if err != nil {
		return nil, err
	}
	return set.Slurm(ctx)
}

// DB is the pool of gpubridge's own database, made once per process; its
// first statement checks the schema. A command (run by a person) creates
// gpubridge's schema in an empty database and applies pending
// migrations; it refuses a database that holds other tables.
// `serve` creates a schema only with --init (cmd/gpubridge/daemon).
func (e *Env) DB(ctx context.Context) (*sqlx.DB, error) {
	set, err := e.Clients()
	if err != nil {
		return nil, err
	}
	return set.DB(ctx)
}

// SlurmDB is slurmdbd's database through the read-only DSN.
func (e *Env) SlurmDB(ctx context.Context) (*sqlx.DB, error) {
	set, err := e.Clients()
	if err != nil {
		return nil, err
	}
	return set.SlurmDB(ctx)
}

// Cluster is the handle of the cluster the process (or the daemon's
// configuration generation) serves: every use case and job takes the
// cluster's name from it, never from the configuration.
func (e *Env) Cluster() (*clients.Cluster, error) {
	set, err := e.Clients()
	if err != nil {
		return nil, err
	}
	return set.Cluster(), nil
}

// ClusterName is the name of the cluster the process serves: cluster:
// when configured, else the one slurmrestd reports (clients.Cluster).
func (e *Env) ClusterName(ctx context.Context) (string, error) {
	h, err := e.Cluster()
	if err != nil {
		return "", err
	}
	return h.Name(ctx)
}

// Conns are what a feature's wiring is built on: the configuration, the
// pool of gpubridge's database, the cluster's handle and its name, and,
// when asked for, its slurmrestd client. Making them connects nothing,
// except that a cluster: left unset is asked of slurmrestd (once per
// configuration generation).
type Conns struct {
	Config  config.Config
	DB      *sqlx.DB
	Handle  *clients.Cluster
	Cluster string
	Slurm   *slurmrest.Client // nil unless asked for
}

// on returns the Env's Conns; withSlurm adds the slurmrestd client (a
// configuration that makes none is then the error).
func (e *Env) on(ctx context.Context, withSlurm bool) (Conns, error) {
	c, err := e.Config()
	if err != nil {
		return Conns{}, err
	}
	k := Conns{Config: c}
	if withSlurm {
		if k.Slurm, err = e.Slurm(ctx); err != nil {
			return Conns{}, err
		}
	}
	if k.DB, err = e.DB(ctx); err != nil {
		return Conns{}, err
	}
	if k.Handle, err = e.Cluster(); err != nil {
		return Conns{}, err
	}
	if k.Cluster, err = k.Handle.Name(ctx); err != nil {
		return Conns{}, err
	}
	return k, nil
}

// Requests returns slurmrestd's request counters so far.
func (e *Env) Requests() (reads, writes int64) {
	if e.conns == nil {
		return 0, 0
	}
	cl := e.conns.BuiltSlurm()
	if cl == nil {
		return 0, 0
	}
	s := cl.Stats()
	return s.Reads, s.Writes
}

// SacctmgrCommands is how many sacctmgr commands (reconcile.sacctmgr) the
// process's clients have run so far.
func (e *Env) SacctmgrCommands() int64 {
	if e.conns == nil || e.conns.Sacctmgr() == nil {
		return 0
	}
	return e.conns.Sacctmgr().Commands()
}

// WithClients returns a copy of e bound to one configuration of the
// daemon and its clients: the features' builders (DB, Slurm, Config) then
// use the daemon's reloadable clients. The copy is not
// changed after it is made, so jobs of one configuration share it without
// locks.
func (e *Env) WithClients(c config.Config, set *clients.Set) *Env {
	e.Logger()
	e.Registry()
	g := *e
	g.cfg = &c
	g.conns = set
	return &g
}
