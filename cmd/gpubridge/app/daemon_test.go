package app

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
)

// TestDaemonHealthJobs: with health.nodes set, the daemon schedules one
// cycle per health schedule on its spec and the harvest on
// schedules.health, needs slurmrestd even with every other job off, and
// registers the health metrics; without health.nodes it has no health job.
func TestDaemonHealthJobs(t *testing.T) {
	e := &Env{Stderr: io.Discard}
	d := NewDaemonJobs(e)
	c := config.Default()
	c.Cluster = "testbed"
	c.Schedules = config.Schedules{Health: "@every 30s"}
	jobs, err := d.Jobs(context.Background(), c, clients.New(c, clients.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if strings.HasPrefix(j.Job.Name(), "health") && j.Job.Name() != "health-credits" {
			t.Errorf("health job %s without health.nodes", j.Job.Name())
		}
	}
	if checks := d.Checks(c, nil); len(checks) != 1 {
		t.Errorf("checks without health.nodes: %d, want the database only", len(checks))
	}
	c.Health.Nodes = []string{"gpu-[01-02]"}
	jobs, err = d.Jobs(context.Background(), c, clients.New(c, clients.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, j := range jobs {
		if strings.HasPrefix(j.Job.Name(), "health") && j.Job.Name() != "health-credits" { // the credits' job is not the health schedules'
			got[j.Job.Name()] = j.Spec
		}
	}
	want := map[string]string{"health-acceptance": "@every 5m", "health-quick": "@every 10m", "health-weekly": "0 4 * * 0", "health-harvest": "@every 30s"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("health jobs (-want +got)\n%s", diff)
	}
	var names []string
	for _, ch := range d.Checks(c, nil) {
		names = append(names, ch.Name)
	}
	if !slices.Contains(names, clients.NameSlurmRest) {
		t.Errorf("readiness checks %v: the health jobs need slurmrestd", names)
	}
	mfs, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, mf := range mfs {
		have[mf.GetName()] = true
	}
	for _, m := range []string{"gpubridge_health_nodes"} {
		if !have[m] {
			t.Errorf("metric %s not registered in the daemon's registry", m)
		}
	}
}

// TestDaemonCreditJob: the daemon schedules the credit job on
// schedules.healthCredits while health.credits is on, and not when off;
// it then needs slurm_acct_db ready when slurmdb.dsn is set.
func TestDaemonCreditJob(t *testing.T) {
	d := NewDaemonJobs(&Env{})
	for _, on := range []bool{true, false} {
		c := config.Default()
		c.Schedules = config.Schedules{HealthCredits: "@every 15m"}
		c.Cluster, c.SlurmDB.DSN = "tb", "ro:ro@tcp(127.0.0.1:1)/slurm_acct_db"
		c.Health.Credits.Enabled = on
		set := clients.New(c, clients.Options{})
		jobs, err := d.Jobs(context.Background(), c, set)
		if err != nil {
			t.Fatal(err)
		}
		spec := "none"
		for _, j := range jobs {
			if j.Job.Name() == "health-credits" {
				spec = j.Spec
			}
		}
		want := map[bool]string{true: "@every 15m", false: ""}[on]
		if spec != want {
			t.Errorf("credits on=%v: the health-credits job's spec is %q, want %q", on, spec, want)
		}
		var names []string
		for _, ch := range d.Checks(c, set) {
			names = append(names, ch.Name)
		}
		if has := slices.Contains(names, clients.NameSlurmDB); has != on {
			t.Errorf("credits on=%v: readiness checks %v", on, names)
		}
	}
}
