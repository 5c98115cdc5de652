package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestHealthSection(t *testing.T) {
	p := filepath.Join(t.TempDir(), "g.yaml")
	yaml := `version: 1
health:
  nodes: [gpu-a, "gpu-[01-04]"]
  account: hsvc
  outputDir: /shared/health
  requalifyPasses: 2
  acceptance:
    name: acceptance
    spec: "@every 2m"
    checks: [dcgm-r1, hot]
  schedules:
    - name: quick
      spec: "@every 5m"
      checks: [xid, hot]
  checks:
    - name: hot
      command: /usr/local/sbin/gpu-temp
      timeout: 30s
      fatal: true
      thresholds:
        h100: {temp_c: {max: 85}}
`
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p, false, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	h := c.Health
	if h.User != "root" || h.MaxConcurrent != 4 || h.RequalifyPasses != 2 || h.AcceptancePasses != 1 || len(h.Schedules) != 1 ||
		h.Checks[0].Timeout.Duration != 30*time.Second || !*h.Checks[0].Fatal || *h.Checks[0].Thresholds["h100"]["temp_c"].Max != 85 {
		t.Fatalf("health %+v", h)
	}
}

func TestHealthDefaultsValid(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(c.Health.Nodes) != 0 {
		t.Error("by default gpubridge manages no node's health")
	}
}

func TestHealthProblems(t *testing.T) {
	c := Default()
	c.Health.Nodes = []string{"gpu a"}
	c.Health.Account = ""
	c.Health.OutputDir = "relative/dir"
	c.Health.MaxConcurrent = 0
	c.Health.Retention = Duration{}
	c.Health.Acceptance.Spec = "sometimes"
	c.Health.Schedules = append(c.Health.Schedules, HealthSchedule{Name: "quick", Checks: []string{"Bad"}})
	c.Health.Checks = []HealthCheck{{Name: "x y", Nodes: 3}}
	err := c.Validate()
	if err == nil {
		t.Fatal("invalid health section accepted")
	}
	for _, field := range []string{"health.nodes[0]", "health.account", "health.outputDir", "health.maxConcurrent", "health.retention",
		"health.acceptance.spec", "health.schedules[2].name", "health.schedules[2].checks[0]", "health.checks[0].name", "health.checks[0].nodes"} {
		if !strings.Contains(err.Error(), "- "+field+":") {
			t.Errorf("no problem reported for %s:\n%v", field, err)
		}
	}
}

func TestHealthSchedule(t *testing.T) {
	c := Default()
	if c.Schedules.Health != "@every 1m" {
		t.Errorf("schedules.health default %q", c.Schedules.Health)
	}
	c.Schedules.Health = "each minute"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), `- schedules.health: "each minute" is not a cron spec`) {
		t.Errorf("bad schedules.health: %v", err)
	}
	c.Schedules.Health = ""
	if err := c.Validate(); err != nil {
		t.Errorf("schedules.health off: %v", err)
	}
}
