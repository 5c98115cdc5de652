package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestLoadPrecedence(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "g.yaml")
	if err := os.WriteFile(p, []byte("version: 1\ncluster: fromfile\nslurmrest:\n  url: http://file:1\n  timeout: 3s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p, false, envOf(map[string]string{"GPUBRIDGE_SLURMREST_URL": "http://env:2"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Cluster != "fromfile" || c.SlurmRest.URL != "http://env:2" || c.SlurmRest.Timeout.Duration != 3*time.Second || c.SlurmRest.User != "root" {
		t.Fatalf("precedence wrong: %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestLoadMissing(t *testing.T) {
	if _, err := Load("/nonexistent/x.yaml", true, envOf(nil)); err != nil {
		t.Fatalf("optional missing file: %v", err)
	}
	if _, err := Load("/nonexistent/x.yaml", false, envOf(nil)); err == nil {
		t.Fatal("required missing file: want error")
	}
}

func TestLoadUnknownField(t *testing.T) {
	p := filepath.Join(t.TempDir(), "g.yaml")
	os.WriteFile(p, []byte("version: 1\nslurmrest:\n  ur1: http://x\n"), 0o600)
	_, err := Load(p, false, envOf(nil))
	if err == nil || !strings.Contains(err.Error(), "ur1") {
		t.Fatalf("want error naming unknown field ur1, got %v", err)
	}
}

func TestValidateReportsEverything(t *testing.T) {
	c := Default()
	c.Version = 2
	c.Cluster = "a b"
	c.SlurmRest.URL = "ftp://x"
	c.SlurmRest.APIVersion = "v0.0.40"
	c.Schedules.Burst = "every now and then"
	c.SlurmRest.Timeout.Duration = 0
	err := c.Validate()
	var ve ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want ValidationError, got %v", err)
	}
	want := []string{"cluster", "schedules.burst", "slurmrest.apiVersion", "slurmrest.timeout", "slurmrest.url", "version"}
	if len(ve) != len(want) {
		t.Fatalf("want %d problems, got %d: %v", len(want), len(ve), err)
	}
	for i, f := range want {
		if ve[i].Field != f {
			t.Errorf("problem %d: field %q, want %q", i, ve[i].Field, f)
		}
	}
}

func TestEnvTimeoutBad(t *testing.T) {
	c := Default()
	c.ApplyEnv(envOf(map[string]string{"GPUBRIDGE_SLURMREST_TIMEOUT": "soon"}))
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "slurmrest.timeout") {
		t.Fatalf("want timeout error, got %v", err)
	}
}

func TestMaxBodyBytes(t *testing.T) {
	c := Default()
	if c.SlurmRest.MaxBodyBytes != 256<<20 || c.Validate() != nil {
		t.Fatalf("default maxBodyBytes %d: %v", c.SlurmRest.MaxBodyBytes, c.Validate())
	}
	c.SlurmRest.MaxBodyBytes = 1000
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "slurmrest.maxBodyBytes: is 1000; must be at least 65536") {
		t.Fatalf("want a maxBodyBytes error, got %v", err)
	}
}

func TestValidateGuardFile(t *testing.T) {
	for path, ok := range map[string]bool{
		"":                                       true, // not written
		"/var/lib/gpubridge/guard/tenants.table": true,
		"/etc/slurm/gpubridge-tenants.table":     true,
		"tenants.table":                          false,
		"/var/lib/gpubridge/guard/":              false,
		"/var/lib/gpubridge/../guard/t":          false,
	} {
		c := Default()
		c.Tenants.GuardFile = path
		err := c.Validate()
		var ve ValidationError
		switch {
		case ok && err != nil:
			t.Errorf("%q: %v", path, err)
		case !ok && (!errors.As(err, &ve) || len(ve) != 1 || ve[0].Field != "tenants.guardFile"):
			t.Errorf("%q: want one tenants.guardFile problem, got %v", path, err)
		}
	}
}

func TestValidateServerAndTokenFile(t *testing.T) {
	cases := map[string]struct {
		edit  func(*Config)
		field string // "" = valid
	}{
		"defaults":                {func(*Config) {}, ""},
		"listen without port":     {func(c *Config) { c.Server.Listen = "127.0.0.1" }, "server.listen"},
		"listen all interfaces":   {func(c *Config) { c.Server.Listen = ":9180" }, ""},
		"cert without key":        {func(c *Config) { c.Server.TLSCertFile = "/etc/gpubridge/tls.crt" }, "server.tlsCertFile"},
		"cert and key":            {func(c *Config) { c.Server.TLSCertFile, c.Server.TLSKeyFile = "a.crt", "a.key" }, ""},
		"zero write timeout":      {func(c *Config) { c.Server.WriteTimeout.Duration = 0 }, "server.writeTimeout"},
		"header longer than read": {func(c *Config) { c.Server.ReadHeaderTimeout.Duration = time.Minute }, "server.readHeaderTimeout"},
		"tiny header limit":       {func(c *Config) { c.Server.MaxHeaderBytes = 10 }, "server.maxHeaderBytes"},
		"huge body limit":         {func(c *Config) { c.Server.MaxBodyBytes = 1 << 40 }, "server.maxBodyBytes"},
		"token file alone":        {func(c *Config) { c.SlurmRest.TokenFile = "/run/gpubridge/jwt" }, ""},
		"token file and key":      {func(c *Config) { c.SlurmRest.TokenFile, c.SlurmRest.JWTKeyFile = "/run/t", "/etc/k" }, "slurmrest.tokenFile"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := Default()
			tc.edit(&c)
			err := c.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			var ve ValidationError
			if !errors.As(err, &ve) || len(ve) != 1 || ve[0].Field != tc.field {
				t.Fatalf("want one problem at %s, got %v", tc.field, err)
			}
		})
	}
}

func TestRequireSlurmRestAcceptsTokenFile(t *testing.T) {
	c := Default()
	if err := c.RequireSlurmRest(); err == nil {
		t.Fatal("no credentials: want an error")
	}
	c.ApplyEnv(envOf(map[string]string{"GPUBRIDGE_SLURMREST_TOKEN_FILE": "/run/gpubridge/jwt"}))
	if err := c.RequireSlurmRest(); err != nil {
		t.Fatalf("token file: %v", err)
	}
}

func TestReconcileKeys(t *testing.T) {
	c := Default()
	if c.Reconcile.MaxDeleteShare != 0.10 || c.Reconcile.WriterLockTimeout.Duration != 30*time.Second {
		t.Fatalf("defaults: %+v", c.Reconcile)
	}
	if c.Reconcile.ReadAssociations != ReadAssociationsAuto {
		t.Fatalf("readAssociations default %q", c.Reconcile.ReadAssociations)
	}
	c.Reconcile.MaxDeleteShare = 1.5
	c.Reconcile.WriterLockTimeout.Duration = 0
	c.Reconcile.SacctmgrFrom = -1
	c.Reconcile.Sacctmgr = "sacctmgr\n-i"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "reconcile.sacctmgrFrom: is -1") || !strings.Contains(err.Error(), "reconcile.sacctmgr: has a control character") {
		t.Errorf("sacctmgr settings: %v", err)
	}
	c.Reconcile.SacctmgrFrom, c.Reconcile.Sacctmgr = 0, ""
	c.Reconcile.ReadAssociations = "sql"
	err := c.Validate()
	for _, f := range []string{"reconcile.maxDeleteShare: 1.5 is not a share from 0 to 1", "reconcile.writerLockTimeout: must be a positive duration",
		`reconcile.readAssociations: "sql" is not one of auto, database, rest`} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("Validate() = %v; want %q", err, f)
		}
	}
	c = Default()
	c.Reconcile.ReadAssociations = ReadAssociationsDatabase
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "reconcile.readAssociations: \"database\" needs slurmdb.dsn") {
		t.Errorf("database without slurmdb.dsn: %v", err)
	}
	c.SlurmDB.DSN = "ro:ro@tcp(127.0.0.1:3306)/slurm_acct_db"
	if err := c.Validate(); err != nil && strings.Contains(err.Error(), "readAssociations") {
		t.Errorf("database with slurmdb.dsn: %v", err)
	}
}

func TestIngestKeys(t *testing.T) {
	c := Default()
	if c.Ingest.ChangesEvery.Duration != time.Hour || c.Ingest.VerifyEvery.Duration != 24*time.Hour {
		t.Fatalf("defaults: %+v", c.Ingest)
	}
	c.Ingest.VerifyEvery.Duration = 0 // off
	if err := c.Validate(); err != nil {
		t.Fatalf("verifyEvery 0: %v", err)
	}
	c.Ingest.ChangesEvery.Duration = time.Second
	c.Ingest.VerifyEvery.Duration = -time.Hour
	err := c.Validate()
	for _, f := range []string{"ingest.changesEvery: is 1s; must be 0 (off) or at least 1m", "ingest.verifyEvery: is -1h0m0s; must be 0 (off) or at least 1m"} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("Validate() = %v; want %q", err, f)
		}
	}
}
