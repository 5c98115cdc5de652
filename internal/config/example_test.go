package config

import (
	"testing"
)

// The shipped example must load and validate, so it never rots.
func TestExampleConfigValid(t *testing.T) {
	c, err := Load("../../contrib/gpubridge.yaml.example", false, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Cluster != "mycluster" || c.SlurmRest.JWTKeyFile != "/etc/slurm/jwt_hs256.key" {
		t.Fatalf("example not read: %+v", c)
	}
}
