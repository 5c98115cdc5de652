package config

import (
	"fmt"
	"path/filepath"
	"regexp"
	"time"

	"github.com/robfig/cron/v3"
)

// Health configures node health checks (docs/health.md).
type Health struct {
	// Nodes are the nodes whose health gpubridge manages: names or Slurm
	// hostlists (gpu-[01-16]). Empty: gpubridge checks, drains and resumes
	// no node.
	Nodes []string `json:"nodes"`
	// Account and User run the check jobs: a Slurm account that is no
	// tenant's (its jobs are billed to nobody) with an association of User.
	Account string `json:"account"`
	User    string `json:"user"`
	// QOS and Partition of the check jobs; an empty Partition takes the
	// node's first.
	QOS       string `json:"qos"`
	Partition string `json:"partition"`
	// OutputDir holds the check jobs' output files, as the nodes see it;
	// gpubridge reads them at LocalOutputDir (default OutputDir: a shared
	// filesystem).
	OutputDir      string `json:"outputDir"`
	LocalOutputDir string `json:"localOutputDir"`
	// MaxConcurrent caps the check jobs in flight at once.
	MaxConcurrent int `json:"maxConcurrent"`
	// AcceptancePasses: passing acceptance runs in a row a node new to
	// gpubridge needs; RequalifyPasses: those a drained node needs.
	AcceptancePasses int `json:"acceptancePasses"`
	RequalifyPasses  int `json:"requalifyPasses"`
	// Acceptance is the set held nodes must pass, and how often it runs.
	Acceptance HealthSchedule `json:"acceptance"`
	// Schedules run checks on the nodes in service.
	Schedules []HealthSchedule `json:"schedules"`
	// TriggerChecks are what `gpubridge check node` runs without check=
	// (default: the acceptance set).
	TriggerChecks []string `json:"triggerChecks"`
	// TenantChecksPerHour caps the checks one tenant triggers per hour.
	TenantChecksPerHour int `json:"tenantChecksPerHour"`
	// StartWait: how long a cycle waits for a held node's check job to
	// start before it drains the node again.
	StartWait Duration `json:"startWait"`
	// MaxPending: a check job that has not started after this is cancelled.
	MaxPending Duration `json:"maxPending"`
	// Retention: runs, results and evidence older than this are deleted.
	Retention Duration `json:"retention"`
	// Checks define site checks and override built-ins (command, timeout,
	// thresholds per GPU model).
	Checks []HealthCheck `json:"checks"`
	// Credits is the credit policy for work lost to node failures.
	Credits HealthCredits `json:"credits"`
}

// HealthSchedule is a set of checks on a cron spec.
type HealthSchedule struct {
	Name   string   `json:"name"`
	Spec   string   `json:"spec"`
	Checks []string `json:"checks"`
	// WhenIdle: only on nodes where nothing runs.
	WhenIdle bool `json:"whenIdle"`
}

// HealthCheck is a site check or an override of a built-in.
type HealthCheck struct {
	Name       string                            `json:"name"`
	Command    string                            `json:"command"`
	Timeout    Duration                          `json:"timeout"`
	Fatal      *bool                             `json:"fatal"`
	Exclusive  *bool                             `json:"exclusive"`
	Thresholds map[string]map[string]HealthBound `json:"thresholds"`
	FailXIDs   []int                             `json:"failXIDs"`
	// Nodes a site check spans: 1 (default) or 2 (its command runs srun
	// across both nodes of its job; triggered with peer=).
	Nodes int `json:"nodes"`
}

// HealthBound bounds a measured value.
type HealthBound struct {
	Min *float64 `json:"min"`
	Max *float64 `json:"max"`
}

func defaultHealth() Health {
	return Health{
		Account:          "gpubridge-health",
		User:             "root",
		OutputDir:        "/var/spool/gpubridge/health",
		MaxConcurrent:    4,
		AcceptancePasses: 1,
		RequalifyPasses:  3,
		Acceptance: HealthSchedule{Name: "acceptance", Spec: "@every 5m",
			Checks: []string{"dcgm-r2", "nvidia-smi-ecc", "nvidia-smi-pages", "xid"}},
		Schedules: []HealthSchedule{
			{Name: "quick", Spec: "@every 10m", Checks: []string{"nvidia-smi-ecc", "nvidia-smi-pages", "xid"}},
			{Name: "weekly", Spec: "0 4 * * 0", Checks: []string{"dcgm-r3"}, WhenIdle: true},
		},
		TenantChecksPerHour: 4,
		StartWait:           Duration{2 * time.Minute},
		MaxPending:          Duration{time.Hour},
		Retention:           Duration{30 * 24 * time.Hour},
		Credits:             defaultHealthCredits(),
	}
}

var (
	healthCheckName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,39}$`)
	healthNodeList  = regexp.MustCompile(`^[A-Za-z0-9._\-\[\],]+$`)
)

// validateHealth adds the health section's problems. The checks' own
// rules (unknown names, thresholds) are checked when the health service is
// built from them (bridge/health/check.NewCatalog).
func (c Config) validateHealth(add func(field, format string, a ...any)) {
	h := c.Health
	for i, n := range h.Nodes {
		if !healthNodeList.MatchString(n) {
			add(fmt.Sprintf("health.nodes[%d]", i), "%q is not a node name or hostlist such as gpu-[01-16]", n)
		}
	}
	if !validName(h.Account) {
		add("health.account", "%q is not a Slurm account name (the check jobs' service account, e.g. gpubridge-health)", h.Account)
	}
	if !validName(h.User) {
		add("health.user", "%q is not a user name (the check jobs run as this user, e.g. root)", h.User)
	}
	if h.QOS != "" && !validName(h.QOS) {
		add("health.qos", "%q is not a QOS name", h.QOS)
	}
	if h.Partition != "" && !validName(h.Partition) {
		add("health.partition", "%q is not a partition name", h.Partition)
	}
	if !filepath.IsAbs(h.OutputDir) {
		add("health.outputDir", "%q must be an absolute directory the nodes write and gpubridge reads", h.OutputDir)
	}
	if h.LocalOutputDir != "" && !filepath.IsAbs(h.LocalOutputDir) {
		add("health.localOutputDir", "%q must be an absolute directory", h.LocalOutputDir)
	}
	for field, v := range map[string]int{"health.maxConcurrent": h.MaxConcurrent, "health.acceptancePasses": h.AcceptancePasses,
		"health.requalifyPasses": h.RequalifyPasses, "health.tenantChecksPerHour": h.TenantChecksPerHour} {
		if v < 1 {
			add(field, "is %d; must be at least 1", v)
		}
	}
	for field, d := range map[string]Duration{"health.startWait": h.StartWait, "health.maxPending": h.MaxPending, "health.retention": h.Retention} {
		if d.Duration <= 0 {
			add(field, "must be a positive duration such as 2m or 720h")
		}
	}
	names := map[string]bool{}
	for i, s := range append([]HealthSchedule{h.Acceptance}, h.Schedules...) {
		field := "health.acceptance"
		if i > 0 {
			field = fmt.Sprintf("health.schedules[%d]", i-1)
		}
		if !healthCheckName.MatchString(s.Name) {
			add(field+".name", "%q: a schedule name is lower-case letters, digits and '-'", s.Name)
		} else if names[s.Name] {
			add(field+".name", "%q is used twice", s.Name)
		}
		names[s.Name] = true
		if s.Spec != "" {
			if _, err := cron.ParseStandard(s.Spec); err != nil {
				add(field+".spec", "%q is not a cron spec (%v); use e.g. \"@every 10m\" or \"0 4 * * 0\"", s.Spec, err)
			}
		}
		if len(s.Checks) == 0 {
			add(field+".checks", "lists no check")
		}
		for j, n := range s.Checks {
			if !healthCheckName.MatchString(n) {
				add(fmt.Sprintf("%s.checks[%d]", field, j), "%q is not a check name", n)
			}
		}
	}
	if h.Acceptance.Name != "acceptance" {
		add("health.acceptance.name", "is %q; the acceptance schedule is named acceptance", h.Acceptance.Name)
	}
	for i, ch := range h.Checks {
		if !healthCheckName.MatchString(ch.Name) {
			add(fmt.Sprintf("health.checks[%d].name", i), "%q: a check name is lower-case letters, digits and '-', starting with a letter", ch.Name)
		}
		if ch.Timeout.Duration < 0 {
			add(fmt.Sprintf("health.checks[%d].timeout", i), "must not be negative")
		}
		if ch.Nodes < 0 || ch.Nodes > 2 {
			add(fmt.Sprintf("health.checks[%d].nodes", i), "is %d; a check spans 1 or 2 nodes", ch.Nodes)
		}
	}
}
