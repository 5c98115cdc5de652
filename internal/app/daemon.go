package app

import (
	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/internal/clients"
	"github.com/gpubridge/gpubridge/internal/config"
	"github.com/gpubridge/gpubridge/internal/daemon"
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

// ReadinessChecks are the daemon's readiness probes of c: gpubridge's
// database always (the leader lock lives there); slurmrestd when a job
// needs it or it must name the cluster; slurm_acct_db when ingest reads
// it.
func ReadinessChecks(c config.Config, set *clients.Set) []daemon.Check {
	checks := []daemon.Check{{Name: clients.NameDatabase, Run: set.CheckDB}}
	acct := c.Schedules.Ingest != "" || c.Schedules.ClosePeriod != ""
	source, _ := billing.IngestSetup{Config: c}.Source("")
	if c.Schedules.Reconcile != "" || c.Schedules.Burst != "" || c.Schedules.Bookings != "" || len(c.Health.Nodes) > 0 || c.Cluster == "" || ((acct || CreditsSpec(c) != "") && source == billing.SourceSlurmrestd) {
		checks = append(checks, daemon.Check{Name: clients.NameSlurmRest, Run: set.CheckSlurm})
	}
	if (acct || CreditsSpec(c) != "") && source == billing.SourceSlurmDB { // the credit job reads how runs ended there too
		checks = append(checks, daemon.Check{Name: clients.NameSlurmDB, Run: set.CheckSlurmDB})
	}
	return checks
}

// CreditsSpec is the credit job's schedule: none while health.credits is
// off.
func CreditsSpec(c config.Config) string {
	if !c.Health.Credits.Enabled {
		return ""
	}
	return c.Schedules.HealthCredits
}
