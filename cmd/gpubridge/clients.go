package main

import (
	"github.com/gpubridge/gpubridge/internal/clients"
	"github.com/gpubridge/gpubridge/internal/config"
)

// withClients returns a copy of a bound to one configuration of the
// daemon and its clients (app.Env.WithClients).
func (a *App) withClients(c config.Config, set *clients.Set) *App {
	g := *a
	g.Env = a.Env.WithClients(c, set)
	return &g
}
