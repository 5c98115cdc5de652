package main

import (
	"context"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/bridge/slurmrest"
	"github.com/gpubridge/gpubridge/internal/clients"
	"github.com/gpubridge/gpubridge/internal/config"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// clients returns the process's clients, made for the configuration on
// first use. The CLI's may create gpubridge's schema in an empty database
// (see DB).
func (a *App) clients() (*clients.Set, error) {
	if a.conns != nil {
		return a.conns, nil
	}
	c, err := a.Config()
	if err != nil {
		return nil, err
	}
	a.conns = clients.New(c, clients.Options{Logger: a.Logger(), DB: sqldb.Policy{InitEmpty: true}})
	return a.conns, nil
}

// closeClients closes the pools the command opened (runContext does at
// the end of every command).
func (a *App) closeClients() {
	if a.conns != nil {
		a.conns.Close()
	}
}

// Slurm is the slurmrestd client, built (and the API version negotiated)
// once per process, or once per configuration in the daemon.
func (a *App) Slurm(ctx context.Context) (*slurmrest.Client, error) {
	set, err := a.clients()
	if err != nil {
		return nil, err
	}
	cl, err := set.Slurm(ctx)
	if err != nil {
		return nil, err
	}
	a.slurm = cl
	return cl, nil
}

// acctSlurmDB is slurmdbd's database through the read-only DSN.
func (a *App) acctSlurmDB(ctx context.Context) (*sqlx.DB, error) {
	set, err := a.clients()
	if err != nil {
		return nil, err
	}
	return set.SlurmDB(ctx)
}

// withClients returns a copy of a bound to one configuration of the
// daemon and its clients: the features' helpers (a.DB, a.Slurm,
// a.Config) then use the daemon's lazily built, reloadable clients. The
// copy is not changed after it is made, so jobs of one configuration share
// it without locks.
func (a *App) withClients(c config.Config, set *clients.Set) *App {
	a.Logger()
	a.Registry()
	g := *a
	g.cfg = &c
	g.conns = set
	g.slurm = nil
	return &g
}
