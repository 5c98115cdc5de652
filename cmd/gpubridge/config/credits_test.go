package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestHealthCreditsSection(t *testing.T) {
	c := Default()
	if h := c.Health.Credits; !h.Enabled || h.MinLoss != "0" || h.KillWindow.Duration != 2*time.Minute || h.Lookback.Duration != 7*24*time.Hour ||
		c.Schedules.HealthCredits != "@every 15m" {
		t.Errorf("defaults %+v, schedule %q", h, c.Schedules.HealthCredits)
	}
	p := filepath.Join(t.TempDir(), "g.yaml")
	yaml := "version: 1\nschedules: {healthCredits: \"@every 5m\"}\nhealth:\n  credits: {enabled: false, minLoss: \"0.50\", killWindow: 5m, lookback: 14d}\n"
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Load(p, false, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	h := got.Health.Credits
	if a, _ := h.MinLossAmount(); h.Enabled || a.Units() != 50 || h.KillWindow.Duration != 5*time.Minute || h.Lookback.Duration != 14*24*time.Hour ||
		got.Schedules.HealthCredits != "@every 5m" {
		t.Errorf("loaded %+v, schedule %q", h, got.Schedules.HealthCredits)
	}
	cases := map[string]struct {
		edit  func(*Config)
		field string
	}{
		"negative minLoss": {func(c *Config) { c.Health.Credits.MinLoss = "-1" }, "health.credits.minLoss"},
		"bad minLoss":      {func(c *Config) { c.Health.Credits.MinLoss = "1,5" }, "health.credits.minLoss"},
		"long killWindow":  {func(c *Config) { c.Health.Credits.KillWindow.Duration = 2 * time.Hour }, "health.credits.killWindow"},
		"short lookback":   {func(c *Config) { c.Health.Credits.Lookback.Duration = time.Minute }, "health.credits.lookback"},
		"bad schedule":     {func(c *Config) { c.Schedules.HealthCredits = "every 5m" }, "schedules.healthCredits"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := Default()
			tc.edit(&c)
			var ve ValidationError
			if err := c.Validate(); !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("Validate: %v, want a problem of %s", err, tc.field)
			}
		})
	}
}
