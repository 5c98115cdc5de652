package app

import (
	"github.com/gpubridge/gpubridge/internal/config"
)

// ServeConfig is serve's configuration loader (daemon.Options.Load): the
// configuration read afresh (at start and at every SIGHUP), with --listen
// (listen, "" for none) over server.listen and --init (initDB) or
// database.init, validated.
func (e *Env) ServeConfig(listen string, initDB bool) func() (config.Config, error) {
	return func() (config.Config, error) {
		c, err := e.LoadConfig()
		if err != nil {
			return c, err
		}
		if listen != "" {
			c.Server.Listen = listen
		}
		c.Database.Init = c.Database.Init || initDB
		return c, c.Validate()
	}
}
