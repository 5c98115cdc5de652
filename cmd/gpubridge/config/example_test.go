package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The shipped example must load and validate, so it never rots.
func TestExampleConfigValid(t *testing.T) {
	c, err := Load("../../../contrib/gpubridge.yaml.example", false, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Cluster != "mycluster" || c.SlurmRest.JWTKeyFile != "/etc/slurm/jwt_hs256.key" {
		t.Fatalf("example not read: %+v", c)
	}
	// The example points the guard table where contrib/job_submit.lua
	// reads it and where contrib/gpubridge.service lets the daemon write.
	if c.Tenants.GuardFile != DefaultGuardFile {
		t.Errorf("example tenants.guardFile = %q, want %q", c.Tenants.GuardFile, DefaultGuardFile)
	}
	script, err := os.ReadFile("../../../contrib/job_submit.lua")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), `os.getenv("GPUBRIDGE_GUARD_FILE") or "`+DefaultGuardFile+`"`) {
		t.Errorf("contrib/job_submit.lua does not default to %s", DefaultGuardFile)
	}
	unit, err := os.ReadFile("../../../contrib/gpubridge.service")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(unit), "\nStateDirectory=gpubridge\n") || !strings.HasPrefix(DefaultGuardFile, "/var/lib/gpubridge/") {
		t.Errorf("contrib/gpubridge.service does not give the daemon %s (StateDirectory=gpubridge)", filepath.Dir(DefaultGuardFile))
	}
}
